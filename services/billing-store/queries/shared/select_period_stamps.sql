-- Every closed period's fold stamp (migration 0020; none for closes before it) and account
-- term revision (migration 0021): period, stamp, terms_rev.
select period, stamp, terms_rev from periods
