-- Issue 14, `Idempotency-Key` on admin POST/PUT/DELETE: the first request with a key runs
-- and its answer is kept; a retry with the same key (and the same request) gets that answer
-- again, a different request with the same key a 422. status 0: the first one is running
-- (a concurrent retry waits for it).
create table idempotency_keys (
    scope text not null,
    key text not null,
    fingerprint text not null,
    status integer not null,
    content_type text,
    response bytea,
    created_at_ms bigint not null,
    primary key (scope, key)
);
