-- Issue 11, bounded storage: `events` (identities) partitioned by the UTC month of each
-- event's end (declarative range partitioning on end_s). New identities land in the month
-- their event ends, so the dedupe horizon is a few partitions, and `gpubill compact` drops a
-- whole partition (no row-by-row delete, no bloat) once it lies before the horizon and every
-- row of it is in closed periods. Months are created ahead by the engines
-- (`Store::maintain_partitions`); anything outside them lands in `events_default`.
--
-- A partitioned table's unique keys must include the partition key, so the key is
-- (ident, end_s): a redelivery (same content, same end) meets its row through it, and a
-- conflict (same identity, other content, maybe another end) is found by the identity
-- lookup that runs before the insert (`queries/postgres/insert_identities.sql`).
-- Rows from before migration 0009 have no end: they are kept for ever, at end_s = i64::MAX
-- (in the default partition, never before any horizon).
alter table events rename to events_unpartitioned;
create table events (
    ident bytea not null,
    fingerprint bytea not null,
    account text not null,
    log_seq bigint not null,
    end_s bigint not null,
    primary key (ident, end_s)
) partition by range (end_s);
create table events_default partition of events default;
do $$
declare
    m timestamp;
begin
    for m in
        select distinct date_trunc('month', to_timestamp(end_s) at time zone 'UTC')
        from events_unpartitioned
        where end_s is not null and end_s between 946684800 and 4102444800
    loop
        execute format('create table %I partition of events for values from (%s) to (%s)',
                       'events_' || to_char(m, 'YYYYMM'),
                       extract(epoch from m)::bigint,
                       extract(epoch from m + interval '1 month')::bigint);
    end loop;
end $$;
insert into events (ident, fingerprint, account, log_seq, end_s)
select ident, fingerprint, account, log_seq, coalesce(end_s, 9223372036854775807)
from events_unpartitioned;
drop table events_unpartitioned;
