-- Outbox rows without headers: topic, key, payload, created_at_ms (the rows follow:
-- crate::sql::insert_rows).
insert into outbox (topic, key, payload, created_at_ms)
