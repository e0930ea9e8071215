-- Issue 14, found by the simulation: `verify` rated an invoice again "from the events ingested
-- by its issue time", comparing ingest times with the close's time. Clocks cannot order a fold
-- against a close: a fold that read its clock before a close, waited for the close's lock and
-- committed after it (or one in the same millisecond) was counted as known to the close, and
-- verify reported a difference that was not one. Every fold and every close now draws a stamp
-- from one counter (SQLite has one writer at a time), so a fact's stamp is below a close's
-- stamp exactly when its fold committed before that close. Rows written before this
-- migration have no stamp and count as known from the start (as their missing ingest times
-- do); closes before it have none, and verify falls back to times.
create table fold_stamps (last integer not null);
insert into fold_stamps (last) values (0);
alter table usage_facts add column stamp integer;
alter table egress add column stamp integer;
alter table rental_events add column stamp integer;
alter table periods add column stamp integer;
