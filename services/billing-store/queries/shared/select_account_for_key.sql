-- The account and role of the live (not revoked) API key whose hash is $1.
select account, role from api_keys where key_hash = $1 and revoked_at_ms is null
