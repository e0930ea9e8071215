-- Quotas per account: the latest set as JSON (every change is also a command on the commands
-- topic, so a replay reproduces them).
create table quotas (
    account text primary key,
    body text not null,
    updated_at_ms bigint not null
);

-- Holds of synchronous authorizations (two-phase: live, then released or expired).
-- Amounts and quantities are decimal text.
create table holds (
    id text primary key,
    account text not null,
    sku text not null,
    quantity text not null,
    seconds bigint not null,
    amount text not null,
    lease text,
    status text not null,
    created_at_ms bigint not null,
    expires_at_ms bigint not null,
    closed_at_ms bigint
);
create index holds_by_account on holds (account, status);
create index holds_live_by_expiry on holds (status, expires_at_ms);
