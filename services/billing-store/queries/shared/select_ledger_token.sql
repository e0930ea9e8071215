-- The ledger token of account $1 (see ledger_cache.rs).
select token from ledger_tokens where account = $1
