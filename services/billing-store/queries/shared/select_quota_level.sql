-- The level and decision count of quota $2 of account $1 in period $3.
select level, decisions from quota_levels where account = $1 and quota = $2 and period = $3
