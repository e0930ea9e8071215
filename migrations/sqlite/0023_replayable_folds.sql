-- Issue 30: a replay rebuilds dead letters byte-identical, numbers included. SQLite takes a
-- given `seq` as it is (AUTOINCREMENT moves past it): nothing to change; this file keeps the
-- two migration lists in step.
select 1;
