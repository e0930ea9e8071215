-- Credit notes: id, account, period, number, invoice_id, amount, issued_at_ms, body (the
-- rows follow: crate::sql::insert_rows).
insert into credit_notes (id, account, period, number, invoice_id, amount, issued_at_ms, body)
