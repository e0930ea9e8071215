-- The price book version closed period $1 was issued with; no row when it is not closed.
select pricebook_version from periods where period = $1
