-- Endpoint $1's health after an attempt: failing since $2 (ms; null: healthy), disabled at
-- $3 (ms; null leaves it as it is).
update webhook_endpoints
set failing_since_ms = $2, disabled_at_ms = coalesce($3, disabled_at_ms)
where id = $1
