-- One row of the delivery log: endpoint $1, notification $2, attempt $3 (1-based), at $4 (ms),
-- the HTTP status $5 or the error $6 (exactly one of them), latency $7 (ms).
insert into delivery_attempts (endpoint, notification, attempt, at_ms, status_code, error, latency_ms)
values ($1, $2, $3, $4, $5, $6, $7)
