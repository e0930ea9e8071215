-- A replayed fold or close takes the stamp $1 it was recorded with (issue 30): the counter
-- moves past it, never back.
update fold_stamps set last = max(last, ?)
