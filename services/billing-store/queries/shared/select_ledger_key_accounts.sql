-- Every account with a usage key in the ledger. No parameters.
select distinct account from ledger_keys
