-- Dead letters after sequence $1, oldest first, at most $2.
select seq, log_seq, reason, detail, source, event_id, payload, created_at_ms from dead_letters
where seq > $1 order by seq limit $2
