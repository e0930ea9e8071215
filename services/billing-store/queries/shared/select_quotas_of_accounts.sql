-- The quotas of the accounts `filter` selects (crate::sql::in_list over account, the
-- list of names bound as $1), with when they were set.
select account, body, updated_at_ms from quotas where {filter}
