-- The quotas of the accounts `filter` selects (crate::sql::in_json_array over account, the
-- JSON array of names bound as $1), with when they were set.
select account, body, updated_at_ms from quotas where {filter}
