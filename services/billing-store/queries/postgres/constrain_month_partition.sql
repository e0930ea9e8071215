-- Constrains month table `name` to events ending in [`from`, `to`) seconds (so attaching it
-- does not scan it again). No parameters.
alter table {name} add constraint {name}_range check (end_s >= {from} and end_s < {to})
