-- Re-enables disabled live endpoint $1: its failure forgotten. Nothing when it is enabled.
update webhook_endpoints set disabled_at_ms = null, failing_since_ms = null
where id = $1 and disabled_at_ms is not null and deleted_at_ms is null
