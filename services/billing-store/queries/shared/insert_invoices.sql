-- Issued invoices, thirteen values a row (the rows follow: crate::sql::insert_rows).
insert into invoices (id, account, period, number, status, issued_at_ms, pricebook_version, credit, total, body, amount_due, adjustments, credit_note)
