-- Sets term $3 of kind $2 of account $1 to body $4 (JSON; null: ended) as revision $5, at $6
-- (ms).
insert into account_terms (account, kind, term_id, body, rev, updated_at_ms) values ($1, $2, $3, $4, $5, $6)
on conflict (account, kind, term_id) do update set body = excluded.body, rev = excluded.rev, updated_at_ms = excluded.updated_at_ms
