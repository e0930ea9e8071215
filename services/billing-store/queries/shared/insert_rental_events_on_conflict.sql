-- The tail of insert_rental_events.sql: a fact stored already is kept (facts are sets).
on conflict do nothing
