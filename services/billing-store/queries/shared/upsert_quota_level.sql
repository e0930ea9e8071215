-- Sets the level $4 and decision count $5 of quota $2 of account $1 in period $3.
insert into quota_levels (account, quota, period, level, decisions) values ($1, $2, $3, $4, $5)
on conflict (account, quota, period) do update set level = excluded.level, decisions = excluded.decisions
