-- Issue 11, incremental provisional costs: a token per account, set to a new random value in
-- the transaction of every fold that writes the account's ledger (usage keys, egress, rental
-- facts). A process may rate an account from the ledger it keeps in memory only while the
-- stored token is the one it wrote with that ledger: any other writer, or a transaction that
-- rolled back, leaves a token the process does not know, and the ledger is read again.
create table ledger_tokens (
    account text primary key,
    token bigint not null
);

-- Every batch rewrites the row of each key it moved (its runs grow): with room left in each
-- page PostgreSQL updates a row in place of its page (a HOT update: no new entries in the key
-- and account indexes, and vacuum reclaims the old version page by page). Measured in the soak
-- of issue 11 (docs/benchmarks.md).
alter table ledger_keys set (fillfactor = 50);
