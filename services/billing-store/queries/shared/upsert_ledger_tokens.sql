-- Ledger tokens: account, token (the rows follow: crate::sql::insert_rows; then
-- upsert_ledger_tokens_on_conflict.sql).
insert into ledger_tokens (account, token)
