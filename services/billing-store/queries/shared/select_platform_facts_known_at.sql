-- The platform facts (spot price points, node faults: stored under account '') ingested at
-- or before $1 (ms) and stamped below $2 (their fold's stamp, migration 0020); facts stored
-- before migrations 0018 and 0020 have no ingest time or stamp and count as known from the start.
select kind, key, a, b, value from rental_events where account = '' and coalesce(ingested_ms, 0) <= $1 and coalesce(stamp, 0) < $2
