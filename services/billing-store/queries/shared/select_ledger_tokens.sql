-- The ledger tokens of the accounts `filter` selects (crate::sql::in_list over account,
-- the list of names bound as $1).
select account, token from ledger_tokens where {filter}
