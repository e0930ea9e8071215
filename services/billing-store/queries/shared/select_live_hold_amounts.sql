-- The amounts of the live holds at $2 (ms) of the accounts `filter` selects
-- (crate::sql::in_list over account, the list of names bound as $1): a node's subtree.
select amount from holds where {filter} and status = 'live' and expires_at_ms > $2
