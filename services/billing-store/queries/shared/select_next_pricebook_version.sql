-- The number the next uploaded price book version gets. No parameters.
select coalesce(max(version), 0) + 1 as version from pricebooks
