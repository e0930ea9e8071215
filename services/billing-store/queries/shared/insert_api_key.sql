-- Stores API key hash $1 for account $2, created at $3 (ms).
insert into api_keys (key_hash, account, created_at_ms) values ($1, $2, $3)
