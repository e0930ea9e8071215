-- Payments of the invoices of period $1: seq, invoice_id, number, account, amount, method,
-- at_ms, in the order they were made.
select p.seq, p.invoice_id, i.number, i.account, p.amount, p.method, p.at_ms
from invoice_payments p join invoices i on i.id = p.invoice_id
where i.period = $1 order by p.seq
