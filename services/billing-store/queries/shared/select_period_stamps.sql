-- Every closed period's fold stamp (migration 0020; none for closes before it): period,
-- stamp.
select period, stamp from periods
