-- Drops the provisional cost of account $1 in period $2.
delete from provisional_costs where account = $1 and period = $2
