-- Issue 29, one index probe per event: identities (`events`) leave the monthly partitions of
-- migration 0011 for one table with a global unique index on the identity, so that "held
-- before?" and the insert are one B-tree descent. A partitioned table's unique key must hold
-- the partition key, so under 0011 the key was (ident, end_s) and every batch first looked
-- its identities up in every month's partition (a descent per partition), then inserted (one
-- more). Now the engine copies a batch's identities straight in (binary `COPY`, where the
-- unique index answers "held?" in the same descent as the insert) and only a batch that
-- meets a held identity goes the slow way (`queries/postgres/insert_identities.sql`).
--
-- Compaction drops identities by time through `events_by_end`, an index on the event's end:
-- a range of it, not a scan of the table. Ends grow with the clock, so its inserts go to the
-- index's right edge (measured: no cost above the primary key's, `docs/benchmarks.md`).
-- No identity is held twice under 0011 (the look-up runs before every insert), so the
-- rows move over as they are.
alter table events rename to events_by_month;
alter index events_pkey rename to events_by_month_pkey;
create table events (
    ident bytea primary key,
    fingerprint bytea not null,
    account text not null,
    log_seq bigint not null,
    end_s bigint not null
);
insert into events (ident, fingerprint, account, log_seq, end_s)
select distinct on (ident) ident, fingerprint, account, log_seq, end_s
from events_by_month
order by ident, end_s;
create index events_by_end on events (end_s);
drop table events_by_month;
