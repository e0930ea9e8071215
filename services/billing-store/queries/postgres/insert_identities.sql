-- Inserts a batch's new identities and answers the ones the table held before (their
-- fingerprints), in one statement: the outer select reads the snapshot from before the
-- statement's own insert (the new rows' index entries are seen and rechecked away). $1: per row, the 16-byte identity then the 16-byte fingerprint,
-- concatenated (bytea); $2: the accounts, one per line; $3 and $4: the log positions and the
-- event ends, comma-separated. Rows are zipped by position (unnest ... with ordinality).
with x as (
    select substring($1 from cast(t.n as integer) * 32 - 31 for 16) as ident,
           substring($1 from cast(t.n as integer) * 32 - 15 for 16) as fp,
           t.account, t.log_seq, t.end_s
    from unnest(string_to_array($2, E'\n'),
                cast(string_to_array($3, ',') as bigint[]),
                cast(string_to_array($4, ',') as bigint[]))
         with ordinality as t(account, log_seq, end_s, n)
),
ins as (
    insert into events (ident, fingerprint, account, log_seq, end_s)
    select ident, fp, account, log_seq, end_s from x
    on conflict (ident) do nothing
)
-- `= any(array(...))`: an index scan per batch. A join with `x` is planned as a hash join over
-- a sequential scan of the whole table, which grows with every event ever stored.
select e.ident, e.fingerprint from events e where e.ident = any(array(select ident from x))
