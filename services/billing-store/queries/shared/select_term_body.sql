-- The body of term $3 of kind $2 of account $1 (null: ended).
select body from account_terms where account = $1 and kind = $2 and term_id = $3
