-- The tail of upsert_ledger_tokens.sql: an account's row takes the new token.
on conflict (account) do update set token = excluded.token
