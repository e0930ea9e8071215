-- The live (not deleted) webhook endpoints of owner $1 (an account; '' = the platform's, whose
-- account is null), oldest first. Never the secrets.
select id, account, url, description, event_types, disabled_at_ms, failing_since_ms,
       previous_secret_expires_at_ms, created_at_ms
from webhook_endpoints
where coalesce(account, '') = $1 and deleted_at_ms is null
order by created_at_ms, id
