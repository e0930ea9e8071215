-- A webhook endpoint: id $1 (ep_...), account $2 (null: a platform endpoint), url $3,
-- description $4, secret $5 (whsec_...), event_types $6 (a JSON array, '[]' = every type),
-- created at $7 (ms).
insert into webhook_endpoints (id, account, url, description, secret, event_types, created_at_ms)
values ($1, $2, $3, $4, $5, $6, $7)
