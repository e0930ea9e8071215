-- An attempt's outcome on delivery (endpoint $5, notification $6), if it still has $7
-- attempts (compare-and-set): attempts_total $1, round_attempts $2, status $3, next attempt
-- $4 (ms; null keeps it).
update deliveries
set attempts_total = $1, round_attempts = $2, status = $3,
    next_attempt_at_ms = coalesce($4, next_attempt_at_ms)
where endpoint = $5 and notification = $6 and attempts_total = $7
