-- Holds: id, account, sku, quantity, seconds, amount, lease, status, created_at_ms,
-- expires_at_ms (the rows follow: crate::sql::insert_rows).
insert into holds (id, account, sku, quantity, seconds, amount, lease, status, created_at_ms, expires_at_ms)
