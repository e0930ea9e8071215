-- Recomputations that adjustments were issued against: account, period, closed_period,
-- document_id, seq, credit, body, issued_at_ms (the rows follow: crate::sql::insert_rows).
insert into adjustments (account, period, closed_period, document_id, seq, credit, body, issued_at_ms)
