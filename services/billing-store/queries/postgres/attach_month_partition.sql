-- Attaches month table `name` to events as the partition of [`from`, `to`) seconds. No
-- parameters.
alter table events attach partition {name} for values from ({from}) to ({to})
