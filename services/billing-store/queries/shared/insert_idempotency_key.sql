-- Claims key $2 of scope $1 for the request with fingerprint $3 at $4 (ms): no row inserted
-- when the key was used already.
insert into idempotency_keys (scope, key, fingerprint, status, created_at_ms)
values ($1, $2, $3, 0, $4) on conflict (scope, key) do nothing
