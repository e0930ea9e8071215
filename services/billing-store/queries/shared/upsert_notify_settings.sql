-- Sets account $1's notification settings to $2 (JSON) at $3 (ms).
insert into notify_settings (account, body, updated_at_ms) values ($1, $2, $3)
on conflict (account) do update set body = excluded.body, updated_at_ms = excluded.updated_at_ms
