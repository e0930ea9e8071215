-- Drops the identities of events ending before $1 (seconds) inside a closed period.
-- PostgreSQL reads the rows to drop from the index on end_s (`events_by_end`, migration
-- 0028), a range of it; SQLite from its table.
delete from events where end_s < $1 and exists (select 1 from periods p
where events.end_s > p.start_s and events.end_s <= p.end_s)
