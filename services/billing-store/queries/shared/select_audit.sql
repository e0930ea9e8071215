-- The admin commands (the outbox rows of commands topic $1, without the engine's fold records
-- keyed `folds`) after sequence $2, at most $3: seq, payload, created_at_ms, headers (JSON:
-- `gpubill-actor` names who made it).
select seq, payload, created_at_ms, headers from outbox where topic = $1 and key <> 'folds' and seq > $2 order by seq limit $3
