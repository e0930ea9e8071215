-- Issue 12, as-known-at: what each event told and when it was ingested, so that support can
-- rebuild exactly what an account's usage and cost said at an earlier instant (the ledger
-- keeps only the union of what all events told). Events ingested before this migration have
-- no ingest time: as-known-at counts their egress and rental facts as known from the start,
-- and their usage not at all (their content is not kept apart from the ledger).

-- One row per accepted usage event: its key, source, seconds [start_s, end_s), quantity and
-- ingest time (the fold's clock).
create table usage_facts (
    account text not null,
    lease text not null,
    resource text not null,
    sku text not null,
    class text not null,
    source text not null,
    start_s integer not null,
    end_s integer not null,
    quantity text not null,
    ingested_ms integer not null
);
create index usage_facts_by_account on usage_facts (account, ingested_ms);

alter table egress add column ingested_ms integer;
alter table rental_events add column ingested_ms integer;
