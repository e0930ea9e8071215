-- The ledger tokens of the accounts `filter` selects (crate::sql::in_json_array over account,
-- the JSON array of names bound as $1).
select account, token from ledger_tokens where {filter}
