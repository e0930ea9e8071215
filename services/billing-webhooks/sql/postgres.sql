-- Issue 28, webhook delivery: a proposed migration (PostgreSQL), for the lead to turn into
-- migrations/postgres/00NN_webhooks.sql; sqlite.sql is the same with SQLite's types. The
-- queries at the end are what billing_webhooks::outbox::Outbox asks for, as
-- billing_webhooks::memory::MemoryOutbox does it.

-- Endpoints: a customer's (account set, managed with the account's key) or the platform's
-- (account null: every account's notifications, for rental backends).
create table webhook_endpoints (
    id text primary key,                        -- ep_...
    account text references accounts (id),
    url text not null,                          -- validated when written (target.rs)
    secret text not null,                       -- whsec_<base64>, shown to the customer once
    previous_secret text,                       -- during a rotation, until it expires
    previous_secret_expires_at_ms bigint,
    event_types text not null default '[]',     -- JSON array of strings; [] = every type
    enabled boolean not null default true,
    disabled_at_ms bigint,                      -- set when 5 days of failure disabled it
    failing_since_ms bigint,                    -- first failed attempt since the last success
    created_at_ms bigint not null,
    check ((previous_secret is null) = (previous_secret_expires_at_ms is null)),
    check (enabled = (disabled_at_ms is null))
);
create index webhook_endpoints_by_account on webhook_endpoints (account);

-- Notifications: facts of the ledger, written by the core in the transaction that caused
-- them; `id` is the outbox order (and the order of delivery per endpoint), `seq` the account's.
create table notifications (
    id bigint generated always as identity primary key,
    account text not null references accounts (id),
    seq bigint not null,
    type text not null,
    payload text not null,                      -- the JSON body, exactly as sent and signed
    created_at_ms bigint not null,
    unique (account, seq)
);

-- One row per notification and endpoint whose filter takes it, written with the notification.
create table deliveries (
    endpoint text not null references webhook_endpoints (id) on delete cascade,
    notification bigint not null references notifications (id),
    status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
    next_attempt_at_ms bigint not null,
    attempts_total integer not null default 0,  -- over the delivery's life (numbers the log)
    round_attempts integer not null default 0,  -- since queued, resent or re-enabled (schedule)
    primary key (endpoint, notification)
);
-- The head of each endpoint: its pending delivery with the lowest notification id.
create index deliveries_pending on deliveries (endpoint, notification) where status = 'pending';

-- The delivery log: one row per attempt.
create table delivery_attempts (
    endpoint text not null,
    notification bigint not null,
    attempt integer not null,
    at_ms bigint not null,
    status_code integer,                        -- the HTTP status, when one came back
    error text,                                 -- otherwise: refused address, timeout, ...
    latency_ms bigint not null,
    primary key (endpoint, notification, attempt),
    foreign key (endpoint, notification) references deliveries (endpoint, notification)
        on delete cascade,
    check ((status_code is null) <> (error is null))
);

-- Fan-out, in the core's transaction ($1 notification id, $2 created_at_ms, $3 account, $4 type):
--   insert into deliveries (endpoint, notification, next_attempt_at_ms)
--   select e.id, $1, $2 from webhook_endpoints e
--   where (e.account is null or e.account = $3)
--     and (e.event_types = '[]'
--          or exists (select 1 from json_array_elements_text(e.event_types::json) t where t = $4));
--
-- Outbox::due ($1 now_ms, $2 limit): the heads of enabled endpoints that are due.
--   select d.endpoint, d.notification, d.attempts_total, d.round_attempts, e.account, e.url,
--          e.secret, e.previous_secret, e.previous_secret_expires_at_ms, e.event_types,
--          e.failing_since_ms, n.account, n.seq, n.type, n.payload, n.created_at_ms
--   from deliveries d
--   join webhook_endpoints e on e.id = d.endpoint and e.enabled
--   join notifications n on n.id = d.notification
--   where d.status = 'pending' and d.next_attempt_at_ms <= $1
--     and d.notification = (select min(p.notification) from deliveries p
--                           where p.endpoint = d.endpoint and p.status = 'pending')
--   order by d.notification limit $2;
--
-- Outbox::record, one transaction; stop (Recorded::Stale) when the update touches no row:
--   update deliveries set attempts_total = $attempt, round_attempts = $round,
--          status = $status, next_attempt_at_ms = coalesce($retry_at_ms, next_attempt_at_ms)
--   where endpoint = $endpoint and notification = $notification
--     and attempts_total = $expected_attempts_total;
--   insert into delivery_attempts values ($endpoint, $notification, $attempt, $at_ms,
--          $status_code, $error, $latency_ms);
--   update webhook_endpoints set failing_since_ms = $since_ms,   -- null when Healthy
--          enabled = $enabled, disabled_at_ms = $disabled_at_ms  -- only when Disabled
--   where id = $endpoint;
--
-- Outbox::requeue, Resend: update deliveries set status = 'pending', next_attempt_at_ms = $at,
--   round_attempts = 0 where endpoint = $1 and notification = $2 and status <> 'pending';
-- Outbox::requeue, Reenable: update webhook_endpoints set enabled = true, disabled_at_ms = null,
--   failing_since_ms = null where id = $1 and not enabled; then, if a row changed,
--   update deliveries set next_attempt_at_ms = $at, round_attempts = 0
--   where endpoint = $1 and status = 'pending';
