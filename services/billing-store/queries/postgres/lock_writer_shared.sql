-- Takes the writer advisory lock $1 shared, for the rest of the transaction (folds).
select pg_advisory_xact_lock_shared($1)
