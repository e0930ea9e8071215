-- What quotas measure of account $1's stored provisional cost in period $2 (no body).
select total, unit_seconds from provisional_costs where account = $1 and period = $2
