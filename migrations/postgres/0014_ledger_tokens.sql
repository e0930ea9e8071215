-- Issue 11, incremental provisional costs: a token per account, set to a new random value in
-- the transaction of every fold that writes the account's ledger (usage keys, egress, rental
-- facts). A process may rate an account from the ledger it keeps in memory only while the
-- stored token is the one it wrote with that ledger: any other writer, or a transaction that
-- rolled back, leaves a token the process does not know, and the ledger is read again.
create table ledger_tokens (
    account text primary key,
    token bigint not null
);
