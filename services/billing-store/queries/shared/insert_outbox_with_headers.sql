-- Outbox rows with headers: topic, key, payload, created_at_ms, headers (JSON) (the rows
-- follow: crate::sql::insert_rows).
insert into outbox (topic, key, payload, created_at_ms, headers)
