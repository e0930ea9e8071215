-- Account $1's stored provisional invoice of period $2 (its JSON body, with its allocation).
select body from provisional_costs where account = $1 and period = $2
