-- Invoice $1: account, amount due after its adjustments, number, issued_at_ms; no row: no
-- such invoice.
select account, coalesce(amount_due, total) as amount_due, number, issued_at_ms from invoices
where id = $1
