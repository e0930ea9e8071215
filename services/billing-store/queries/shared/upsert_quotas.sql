-- Sets the quotas of account $1 to $2 (JSON), at $3 (ms), replacing the previous set.
insert into quotas (account, body, updated_at_ms) values ($1, $2, $3)
on conflict (account) do update set body = excluded.body, updated_at_ms = excluded.updated_at_ms
