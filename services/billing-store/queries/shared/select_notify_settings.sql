-- The notification settings of the accounts in list $1 ({filter}): account, body (JSON).
select account, body, updated_at_ms from notify_settings where {filter}
