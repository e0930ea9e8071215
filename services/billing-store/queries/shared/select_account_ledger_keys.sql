-- The usage keys of the accounts `filter` selects (bound as $1: one account, or a list
-- of them through crate::sql::in_list), and with `windows` only the keys with a run in
-- one of them (` and (...)` of integer conditions written by ledgers.rs; empty: every key).
select account, lease, resource, sku, class, runs, sources from ledger_keys where {filter}{windows}
