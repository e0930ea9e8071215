-- The rental facts (lease states, counter samples) of the accounts `filter` selects (bound as
-- $1: one account, or a list of them through crate::sql::in_list).
select kind, account, key, a, value from rental_events where {filter}
