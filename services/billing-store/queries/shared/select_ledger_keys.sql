-- The runs and coverage by source of the usage keys `filter` selects (crate::sql::in_list
-- over key_id, the list of key ids bound as $1).
select key_id, runs, sources from ledger_keys where {filter}
