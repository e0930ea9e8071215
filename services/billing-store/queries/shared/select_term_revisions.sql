-- Every revision of every account term up to revision $1, in revision order: rev, account,
-- kind, term_id, body (null: ended) (migration 0021).
select rev, account, kind, term_id, body from account_term_revisions where rev <= $1 order by rev
