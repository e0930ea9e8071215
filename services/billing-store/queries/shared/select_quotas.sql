-- The quotas of account $1 (JSON) and when they were set.
select body, updated_at_ms from quotas where account = $1
