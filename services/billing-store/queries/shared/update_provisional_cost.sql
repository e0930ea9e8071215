-- Re-rates the provisional cost of account $5 in period $6, keeping its position: total $1,
-- unit-seconds $2 (JSON), body $3 (JSON), at $4 (ms).
update provisional_costs set total = $1, unit_seconds = $2, body = $3, updated_at_ms = $4
where account = $5 and period = $6
