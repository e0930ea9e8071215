-- Records revision $1 of term $4 of kind $3 of account $2: body $5 (JSON; null: ended), at $6
-- (ms) (migration 0021).
insert into account_term_revisions (rev, account, kind, term_id, body, recorded_at_ms) values ($1, $2, $3, $4, $5, $6)
