-- Egress records: source, id, account, dest, time_s, time_ns, bytes, lease, ingested_ms, stamp (the rows
-- follow: crate::sql::insert_rows).
insert into egress (source, id, account, dest, time_s, time_ns, bytes, lease, ingested_ms, stamp)
