-- The identities of $1 (a bytea[] of 16-byte identities) that `events` holds, with their
-- fingerprints: one index probe each (`identities.rs`, before a batch's `COPY`). As in
-- insert_identities.sql, the array is read through a subquery so that no plan weighs its
-- contents against stale row estimates and scans the table instead.
select e.ident, e.fingerprint from events e
where e.ident = any(array(select unnest(cast($1 as bytea[]))))
