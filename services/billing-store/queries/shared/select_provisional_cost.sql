-- The stored provisional cost of account $1 in period $2.
select body, unit_seconds, position, updated_at_ms from provisional_costs where account = $1 and period = $2
