-- Account $1's live API key whose hash starts with $2 (its key id): its hash and role.
select key_hash, role from api_keys
where account = $1 and substr(key_hash, 1, 16) = $2 and revoked_at_ms is null
