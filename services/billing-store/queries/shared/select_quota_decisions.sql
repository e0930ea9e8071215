-- Decisions of account $1 (at home and in its regions: billing domains `account@region`),
-- quota $2 and kind $3 ('': any) after sequence $4, oldest first, at most $5.
select seq, id, account, quota, period, kind, used, quota_limit, position, at_ms from quota_decisions
where ($1 = '' or account = $1 or substr(account, 1, length($1) + 1) = $1 || '@')
and ($2 = '' or quota = $2) and ($3 = '' or kind = $3) and seq > $4
order by seq limit $5
