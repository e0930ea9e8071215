-- Rental facts: kind, account, key, a, b, value, ingested_ms, stamp (the rows follow:
-- crate::sql::insert_rows; then insert_rental_events_on_conflict.sql: a fact stated again
-- keeps its first ingest time).
insert into rental_events (kind, account, key, a, b, value, ingested_ms, stamp)
