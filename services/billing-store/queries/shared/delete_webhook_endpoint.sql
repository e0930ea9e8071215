-- Deletes live endpoint $1 of owner $2 ('' = the platform's) at $3 (ms): soft, the row and
-- its delivery log stay; its pending deliveries are never attempted again (due skips it).
update webhook_endpoints set deleted_at_ms = $3
where id = $1 and coalesce(account, '') = $2 and deleted_at_ms is null
