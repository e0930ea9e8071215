-- Stores API key hash $1 for account $2, created at $3 (ms), with role $4, made by $5 (an
-- actor: `admin`, `key:<key id>`; null when not known).
insert into api_keys (key_hash, account, created_at_ms, role, created_by) values ($1, $2, $3, $4, $5)
