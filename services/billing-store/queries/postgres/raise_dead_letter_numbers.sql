-- A replayed fold numbers its dead letters as recorded (issue 30), up to $1: the identity's
-- sequence moves past them, never back.
select setval(pg_get_serial_sequence('dead_letters', 'seq'), greatest($1, (select case when is_called then last_value else 0 end from dead_letters_seq_seq)))
