-- Revokes account $1's live API key whose hash starts with $2 (the key id: 16 hex digits) at
-- $3 (ms): the row stays, listed with its revocation time, and no longer authenticates.
update api_keys set revoked_at_ms = $3
where account = $1 and substr(key_hash, 1, 16) = $2 and revoked_at_ms is null
