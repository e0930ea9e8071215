-- Decisions of account $1, quota $2 and kind $3 ('': any) after sequence $4, oldest first, at
-- most $5.
select seq, id, account, quota, period, kind, used, quota_limit, position, at_ms from quota_decisions
where ($1 = '' or account = $1) and ($2 = '' or quota = $2) and ($3 = '' or kind = $3) and seq > $4
order by seq limit $5
