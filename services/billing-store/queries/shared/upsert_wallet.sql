-- Sets account $1's wallet balance $2 and outstanding $3 at $4 (ms).
insert into wallets (account, balance, outstanding, updated_at_ms) values ($1, $2, $3, $4)
on conflict (account) do update set balance = excluded.balance,
    outstanding = excluded.outstanding, updated_at_ms = excluded.updated_at_ms
