-- A row when account $1 exists.
select 1 from accounts where id = $1
