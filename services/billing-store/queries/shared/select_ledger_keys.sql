-- The runs and coverage by source of the usage keys `filter` selects (crate::sql::in_json_array
-- over key_id, the JSON array of key ids bound as $1).
select key_id, runs, sources from ledger_keys where {filter}
