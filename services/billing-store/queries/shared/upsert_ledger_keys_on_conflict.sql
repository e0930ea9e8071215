-- The tail of upsert_ledger_keys.sql: a stored key takes the new runs and coverage.
on conflict (key_id) do update set runs = excluded.runs, first_s = excluded.first_s, end_s = excluded.end_s, sources = excluded.sources
