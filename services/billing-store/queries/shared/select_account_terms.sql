-- The live terms of account $1, by kind and term id.
select kind, term_id, body, rev, updated_at_ms from account_terms
where account = $1 and body is not null order by kind, term_id
