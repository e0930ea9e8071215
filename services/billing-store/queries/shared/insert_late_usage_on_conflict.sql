-- The tail of insert_late_usage.sql: a note there already is kept.
on conflict do nothing
