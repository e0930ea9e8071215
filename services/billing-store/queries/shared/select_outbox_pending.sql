-- Outbox rows not yet published, oldest first, at most $1.
select seq, topic, key, payload, headers from outbox where published_at_ms is null
order by seq limit $1
