-- The platform facts (spot price points, node faults: stored under account '') ingested at
-- or before $1 (ms); facts stored before migration 0018 have no ingest time and count as
-- known from the start.
select kind, key, a, b, value from rental_events where account = '' and coalesce(ingested_ms, 0) <= $1
