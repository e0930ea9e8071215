-- Where each account's quotas stand in a period (ok, warn, limit): a decision is recorded only
-- when this moves, so decisions never flap.
create table quota_levels (
    account text not null,
    quota text not null,
    period text not null,
    level text not null,
    decisions bigint not null,
    primary key (account, quota, period)
);

-- Quota decisions (also relayed to billing.quota.v1 through the outbox).
create table quota_decisions (
    seq bigint generated always as identity primary key,
    id text not null unique,
    account text not null,
    quota text not null,
    period text not null,
    kind text not null,
    used text not null,
    quota_limit text not null,
    position text not null,
    at_ms bigint not null
);
create index quota_decisions_by_account on quota_decisions (account, seq);
