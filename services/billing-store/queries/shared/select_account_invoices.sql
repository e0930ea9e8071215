-- The issued invoices of account $1: period, id, number, body (the section 6 invoice),
-- issued_at_ms.
select period, id, number, body, issued_at_ms from invoices where account = $1 order by period
