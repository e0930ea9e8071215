-- The latest account term revision (0: none). No parameters.
select coalesce(max(rev), 0) as rev from account_terms
