-- Every live (not ended) account term with its body. No parameters.
select account, kind, term_id, body from account_terms where body is not null
