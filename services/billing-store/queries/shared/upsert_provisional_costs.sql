-- Provisional costs: account, period, total, unit_seconds, body, position, updated_at_ms (the
-- rows follow: crate::sql::insert_rows; then upsert_provisional_costs_on_conflict.sql).
insert into provisional_costs (account, period, total, unit_seconds, body, position, updated_at_ms)
