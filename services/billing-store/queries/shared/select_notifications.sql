-- Notifications after seq $2, oldest first, at most $3: account $1's (empty: every account's,
-- ordered by id then). id, account, seq, type, key, at_s, payload, created_at_ms.
select id, account, seq, type, key, at_s, payload, created_at_ms from notifications
where ($1 = '' or account = $1) and (case when $1 = '' then id else seq end) > $2
order by id limit $3
