-- Whether live endpoint $1 exists (any owner): its id.
select id from webhook_endpoints where id = $1 and deleted_at_ms is null
