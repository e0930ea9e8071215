-- Takes the writer advisory lock $1 shared, for the rest of the transaction (folds), and plans
-- every statement of the fold for its own parameters (`plan_cache_mode`, for the transaction
-- only). A fold's statements are prepared once per connection; a generic plan made while
-- `ledger_keys` or `events` was still small (a sequential scan, compared with each of a
-- thousand looked-up keys) stays cached as the table grows, and one lookup then took tens of
-- seconds (issue 11's soak at 10,000-record batches). A custom plan costs well under a
-- millisecond a statement, and a fold runs about twenty.
select pg_advisory_xact_lock_shared($1), set_config('plan_cache_mode', 'force_custom_plan', true)
