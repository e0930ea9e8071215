-- A replayed fold or close takes the stamp $1 it was recorded with (issue 30): the sequence
-- moves past it, never back, so that stamps drawn afterwards stay above every given one.
select setval('fold_stamps', greatest($1, (select case when is_called then last_value else 0 end from fold_stamps)))
