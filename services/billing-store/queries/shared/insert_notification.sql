-- A notification: account $1, seq $2, type $3, dedupe key $4, at $5 (s), payload $6 (the JSON
-- body as delivered), created at $7 (ms). Nothing when the account has the key already (the
-- same fact written again by a replay or another engine): then no row comes back.
insert into notifications (account, seq, type, key, at_s, payload, created_at_ms)
values ($1, $2, $3, $4, $5, $6, $7)
on conflict (account, key) do nothing
returning id
