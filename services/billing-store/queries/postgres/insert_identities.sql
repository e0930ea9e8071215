-- Answers the identities of a batch's first occurrences that the table held before (with
-- their fingerprints) and inserts the others, in one statement and one round trip.
-- Native arrays, one element per row, zipped by position: $1 the 16-byte identities
-- (bytea[]), $2 the 16-byte fingerprints (bytea[]), $3 the accounts (text[]), $4 the log
-- positions and $5 the event ends (int8[]).
-- `events` is partitioned by month of end_s (migration 0011) and keyed by (ident, end_s), so
-- the lookup comes first and reads every partition by identity (`= any($1)`: an index probe
-- per partition); only identities it did not find are inserted, so a conflict (same
-- identity, other content and end) is never stored beside the first.
with x as (
    select t.ident, t.fp, t.account, t.log_seq, t.end_s
    from unnest(cast($1 as bytea[]), cast($2 as bytea[]), cast($3 as text[]),
                cast($4 as bigint[]), cast($5 as bigint[]))
         as t(ident, fp, account, log_seq, end_s)
),
held as (
    select e.ident, e.fingerprint from events e where e.ident = any(cast($1 as bytea[]))
),
ins as (
    insert into events (ident, fingerprint, account, log_seq, end_s)
    select ident, fp, account, log_seq, end_s from x
    where not exists (select 1 from held h where h.ident = x.ident)
    on conflict (ident, end_s) do nothing
)
select ident, fingerprint from held
