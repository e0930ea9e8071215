-- The rental facts (lease states, counter samples) of the accounts `filter` selects (bound as
-- $1: one account, or a JSON array of them through crate::sql::in_json_array).
select kind, account, key, a, value from rental_events where {filter}
