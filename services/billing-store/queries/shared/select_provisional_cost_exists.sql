-- A row when account $1 has a provisional cost stored for period $2.
select 1 from provisional_costs where account = $1 and period = $2
