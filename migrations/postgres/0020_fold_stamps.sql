-- Issue 14, found by the simulation: `verify` rated an invoice again "from the events ingested
-- by its issue time", comparing ingest times with the close's time. Clocks cannot order a fold
-- against a close: a fold that read its clock before a close, waited for the close's lock and
-- committed after it (or one in the same millisecond) was counted as known to the close, and
-- verify reported a difference that was not one. Every fold and every close now draws a stamp
-- from one sequence under the writer lock (folds hold it shared, a close exclusively), so a
-- fact's stamp is below a close's stamp exactly when its fold committed before that close.
-- Rows written before this migration have no stamp and count as known from the start (as
-- their missing ingest times do); closes before it have none, and verify falls back to times.
create sequence fold_stamps;
alter table usage_facts add column stamp bigint;
alter table egress add column stamp bigint;
alter table rental_events add column stamp bigint;
alter table periods add column stamp bigint;
