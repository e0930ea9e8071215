-- The sku and runs of account $1's usage keys whose last run ends after $2 (seconds).
select sku, runs from ledger_keys where account = $1 and end_s > $2
