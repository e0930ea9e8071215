-- A row when term $3 of kind $2 of account $1 was ever set (live or ended).
select 1 from account_terms where account = $1 and kind = $2 and term_id = $3
