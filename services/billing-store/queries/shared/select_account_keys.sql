-- Account $1's API keys, revoked ones included, oldest first.
select key_hash, created_at_ms, role, created_by, revoked_at_ms from api_keys
where account = $1 order by created_at_ms, key_hash
