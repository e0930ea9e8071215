-- Sets the profile of account $1 (or of the seller, '@seller') to $2 (JSON), at $3 (ms),
-- replacing the previous one.
insert into account_profiles (account, body, updated_at_ms) values ($1, $2, $3)
on conflict (account) do update set body = excluded.body, updated_at_ms = excluded.updated_at_ms
