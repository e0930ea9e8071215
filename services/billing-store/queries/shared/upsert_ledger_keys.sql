-- Usage keys: key_id, account, lease, resource, sku, class, runs, first_s, end_s, sources (the
-- rows follow: crate::sql::insert_rows; then upsert_ledger_keys_on_conflict.sql).
insert into ledger_keys (key_id, account, lease, resource, sku, class, runs, first_s, end_s, sources)
