-- Dedupe looks events up by their primary key (source, id) now: the index on id alone
-- only cost every insert.
drop index if exists events_by_id;
