-- Live webhook endpoint $1 of owner $2 (an account; '' = the platform's). Never the secrets.
select id, account, url, description, event_types, disabled_at_ms, failing_since_ms,
       previous_secret_expires_at_ms, created_at_ms
from webhook_endpoints
where id = $1 and coalesce(account, '') = $2 and deleted_at_ms is null
