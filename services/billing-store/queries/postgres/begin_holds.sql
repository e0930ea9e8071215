-- Begins an authorization group: takes the holds advisory lock $1, sets the transaction's
-- synchronous_commit to $2 ('on' or 'off'), and answers (lock, latest price book version,
-- synchronous_commit, latest account term revision).
select cast(pg_advisory_xact_lock($1) as text) as locked,
(select coalesce(max(version), 0) from pricebooks) as version,
set_config('synchronous_commit', $2, true) as synchronous_commit,
(select coalesce(max(rev), 0) from account_terms) as terms_rev
