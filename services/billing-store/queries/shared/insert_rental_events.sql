-- Rental facts: kind, account, key, a, b, value (the rows follow: crate::sql::insert_rows;
-- then insert_rental_events_on_conflict.sql).
insert into rental_events (kind, account, key, a, b, value)
