-- Dead letters: seq (numbered by the fold, issue 30), log_seq, reason, detail, source,
-- event_id, payload, created_at_ms (the rows follow: crate::sql::insert_rows).
insert into dead_letters (seq, log_seq, reason, detail, source, event_id, payload, created_at_ms)
