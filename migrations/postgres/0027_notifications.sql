-- Issue 28, the customer lifecycle: budgets and alerts, the arrears sequence, reminders, and
-- their delivery by signed webhooks. Same tables for both databases (SQLite's types differ).
--
-- `notify_settings`: an account's budgets, balance alerts, reminders and arrears policy (the
-- JSON of billing_store NotifySettings), written by the `notify.put` command (replayable).
create table notify_settings (
    account text primary key,
    body text not null,
    updated_at_ms bigint not null
);

-- `notify_states`: what the rules remember between evaluations, per account and subject
-- (`budget:<id>:<period>`, `balance`, `arrears`, `reminder:<key>`): the JSON state of the
-- core's rule (levels crossed, hysteresis, the arrears step and when it began). `block`,
-- when set, is what the state refuses to authorize (a budget with `action = stop` at 100%, an
-- account stopped for arrears): JSON {"node", "used", "limit"}, `node` the account whose
-- subtree it blocks.
create table notify_states (
    account text not null,
    subject text not null,
    body text not null,
    block text,
    updated_at_ms bigint not null,
    primary key (account, subject)
);

-- `notifications`: facts of the ledger, written in the transaction of the batch or command
-- that caused them. `id` is the outbox order (the order of delivery per endpoint), `seq` the
-- account's own numbering, `key` the dedupe key (the same fact always has the same key: a
-- replay or a second engine writing it again finds it there and writes nothing).
create table notifications (
    id bigint generated always as identity primary key,
    account text not null,
    seq bigint not null,
    type text not null,
    key text not null,
    at_s bigint not null,
    payload text not null,
    created_at_ms bigint not null,
    unique (account, seq),
    unique (account, key)
);

-- Webhook endpoints: a customer's (account set, managed with the account's keys) or the
-- platform's (account null: every account's notifications, for rental backends).
-- `event_types`: a JSON array of type names, [] = every type. An endpoint is disabled when
-- `disabled_at_ms` is set (after 5 days of failure); the customer re-enables it.
create table webhook_endpoints (
    id text primary key,
    account text,
    url text not null,
    description text not null default '',
    secret text not null,
    previous_secret text,
    previous_secret_expires_at_ms bigint,
    event_types text not null default '[]',
    disabled_at_ms bigint,
    failing_since_ms bigint,
    created_at_ms bigint not null,
    deleted_at_ms bigint
);
create index webhook_endpoints_by_account on webhook_endpoints (account);

-- One row per notification and endpoint whose filter takes it, written with the notification
-- (or, for an endpoint created later, never: an endpoint receives what happens after it).
create table deliveries (
    endpoint text not null,
    notification bigint not null,
    status text not null default 'pending',
    next_attempt_at_ms bigint not null,
    attempts_total bigint not null default 0,
    round_attempts bigint not null default 0,
    primary key (endpoint, notification)
);
create index deliveries_pending on deliveries (status, endpoint, notification);

-- The delivery log: one row per attempt (HTTP status, or the error when none came back).
create table delivery_attempts (
    endpoint text not null,
    notification bigint not null,
    attempt bigint not null,
    at_ms bigint not null,
    status_code bigint,
    error text,
    latency_ms bigint not null,
    primary key (endpoint, notification, attempt)
);
