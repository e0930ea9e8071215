-- Dead letters: log_seq, reason, detail, source, event_id, payload, created_at_ms (the rows
-- follow: crate::sql::insert_rows).
insert into dead_letters (log_seq, reason, detail, source, event_id, payload, created_at_ms)
