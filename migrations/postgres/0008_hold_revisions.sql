-- A counter per account, moved in the transaction of every change to its holds other than
-- expiry (authorizations, releases, extensions, captures by usage): a process may keep an
-- account's live holds in memory for as long as the counter has not moved (expiry is a
-- matter of time, which the process applies itself).
create table hold_revs (
    account text primary key,
    rev bigint not null
);
