-- The numbers of $1 new dead letters, drawn before they are written (issue 30: the fold
-- records them, so a replay numbers its dead letters alike).
select nextval(pg_get_serial_sequence('dead_letters', 'seq')) as seq from generate_series(1, $1)
