-- Usage facts: account, lease, resource, sku, class, source, start_s, end_s, quantity,
-- ingested_ms, stamp (the rows follow: crate::sql::insert_rows).
insert into usage_facts (account, lease, resource, sku, class, source, start_s, end_s, quantity, ingested_ms, stamp)
