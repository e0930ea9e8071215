-- What account $1's usage events ingested at or before $2 (ms) and stamped below $5 (their
-- fold's stamp, migration 0020; none: known from the start) told, with a second in [$3, $4):
-- lease, resource, sku, class, source, start_s, end_s, quantity.
select lease, resource, sku, class, source, start_s, end_s, quantity from usage_facts
where account = $1 and ingested_ms <= $2 and coalesce(stamp, 0) < $5 and start_s < $4 and end_s > $3
