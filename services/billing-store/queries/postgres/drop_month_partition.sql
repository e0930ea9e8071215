-- Drops month partition `name` with its rows. No parameters.
drop table {name}
