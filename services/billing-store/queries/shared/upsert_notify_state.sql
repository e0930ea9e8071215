-- Sets what the rule of subject $2 remembers for account $1: body $3, block $4 (null: it
-- blocks nothing), at $5 (ms).
insert into notify_states (account, subject, body, block, updated_at_ms) values ($1, $2, $3, $4, $5)
on conflict (account, subject) do update
set body = excluded.body, block = excluded.block, updated_at_ms = excluded.updated_at_ms
