-- A row when period $1 is closed.
select 1 from periods where period = $1
