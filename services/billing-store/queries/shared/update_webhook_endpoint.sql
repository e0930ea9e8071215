-- Changes live endpoint $1 of owner $2 ('' = the platform's): url $3, event_types $4 (JSON
-- array text), description $5; a null leaves the column as it is.
update webhook_endpoints
set url = coalesce($3, url), event_types = coalesce($4, event_types),
    description = coalesce($5, description)
where id = $1 and coalesce(account, '') = $2 and deleted_at_ms is null
