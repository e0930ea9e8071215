-- The revision the next account term change gets. No parameters.
select coalesce(max(rev), 0) + 1 as rev from account_terms
