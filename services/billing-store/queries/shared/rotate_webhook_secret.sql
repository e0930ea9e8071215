-- Rotates the secret of live endpoint $1 of owner $2 ('' = the platform's): $3 becomes the
-- secret, the old one keeps signing until $4 (ms).
update webhook_endpoints
set previous_secret = secret, previous_secret_expires_at_ms = $4, secret = $3
where id = $1 and coalesce(account, '') = $2 and deleted_at_ms is null
