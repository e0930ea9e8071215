-- The latest price book version and the latest account term revision (0: none). No
-- parameters.
select (select coalesce(max(version), 0) from pricebooks) as version,
  (select coalesce(max(rev), 0) from account_terms) as terms_rev
