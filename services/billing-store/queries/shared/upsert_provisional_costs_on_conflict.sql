-- The tail of upsert_provisional_costs.sql: a stored (account, period) takes the new figure.
on conflict (account, period) do update set total = excluded.total, unit_seconds = excluded.unit_seconds,
body = excluded.body, position = excluded.position, updated_at_ms = excluded.updated_at_ms
