-- Invoice $1's account and what it owes after its adjustments; no row: no such invoice.
select account, coalesce(amount_due, total) as amount_due from invoices where id = $1
