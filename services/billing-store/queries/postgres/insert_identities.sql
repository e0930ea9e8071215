-- Answers the identities of a batch's first occurrences that the table held before (with
-- their fingerprints) and inserts the others, in one statement and one round trip.
-- $1: per row, the 16-byte identity then the 16-byte fingerprint, concatenated (bytea);
-- $2: the accounts, one per line; $3 and $4: the log positions and the event ends,
-- comma-separated. Rows are zipped by position (unnest ... with ordinality).
-- `events` is partitioned by month of end_s (migration 0011) and keyed by (ident, end_s), so
-- the lookup comes first and reads every partition by identity (`= any(array(...))`: an index
-- probe per partition); only identities it did not find are inserted, so a conflict (same
-- identity, other content and end) is never stored beside the first.
with x as (
    select substring($1 from cast(t.n as integer) * 32 - 31 for 16) as ident,
           substring($1 from cast(t.n as integer) * 32 - 15 for 16) as fp,
           t.account, t.log_seq, t.end_s
    from unnest(string_to_array($2, E'\n'),
                cast(string_to_array($3, ',') as bigint[]),
                cast(string_to_array($4, ',') as bigint[]))
         with ordinality as t(account, log_seq, end_s, n)
),
held as (
    select e.ident, e.fingerprint from events e where e.ident = any(array(select ident from x))
),
ins as (
    insert into events (ident, fingerprint, account, log_seq, end_s)
    select ident, fp, account, log_seq, end_s from x
    where not exists (select 1 from held h where h.ident = x.ident)
    on conflict (ident, end_s) do nothing
)
select ident, fingerprint from held
