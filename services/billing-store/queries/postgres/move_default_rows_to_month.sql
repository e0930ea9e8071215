-- Moves the rows of events_default ending in [`from`, `to`) seconds into month table `name`.
-- No parameters.
with moved as (delete from events_default where end_s >= {from} and end_s < {to} returning *)
insert into {name} select * from moved
