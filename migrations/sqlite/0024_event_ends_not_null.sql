-- Issue 25, schema parity (tests/backends.rs, `postgres_and_sqlite_schemas_agree_after_migrations`):
-- every identity row has an end, as on PostgreSQL since its migration 0011. Rows from before
-- migration 0009 have none: they get the largest end, 9223372036854775807 (i64::MAX), as
-- PostgreSQL's 0011 gave them. Compaction keeps them as it kept rows without an end
-- (`end_s < cut` holds for neither), so nothing the store does changes.
--
-- SQLite cannot add `not null` to a column: the table is rebuilt with its primary key
-- (source, id) and no other index (0003 dropped `events_by_id`), as 0012 rebuilt late_usage.
create table events_with_ends (
    source text not null,
    id text not null,
    fingerprint blob not null,
    account text not null,
    log_seq integer not null,
    end_s bigint not null,
    primary key (source, id)
);
insert into events_with_ends (source, id, fingerprint, account, log_seq, end_s)
select source, id, fingerprint, account, log_seq, coalesce(end_s, 9223372036854775807)
from events;
drop table events;
alter table events_with_ends rename to events;
