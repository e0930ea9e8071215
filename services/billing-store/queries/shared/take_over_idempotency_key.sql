-- Takes over key $2 of scope $1 for the request with fingerprint $3 at $4 (ms) when its first
-- request has been "running" since before $5 (ms): it died with the claim unreleased (its
-- engine crashed, or the database connection broke after the claim).
update idempotency_keys set created_at_ms = $4
where scope = $1 and key = $2 and fingerprint = $3 and status = 0 and created_at_ms < $5
