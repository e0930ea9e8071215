-- Issue 11, bounded storage: every identity row carries the end of what its event bills
-- (Unix seconds). Past the dedupe horizon, a redelivery is dead-lettered as `too_late` before
-- it reaches this table, so `gpubill compact` may drop the identities of closed periods
-- older than the horizon without letting any event count twice. Rows from before this
-- migration have no end and are kept.
alter table events add column end_s bigint;
