-- Takes the advisory lock $1 exclusively, for the rest of the transaction.
select pg_advisory_xact_lock($1)
