-- Account $1's API keys: key_hash, created_at_ms, oldest first.
select key_hash, created_at_ms from api_keys where account = $1 order by created_at_ms, key_hash
