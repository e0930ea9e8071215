-- Invoice $1's payments in order: seq, amount, method, reference, at_ms.
select seq, amount, method, reference, at_ms from invoice_payments where invoice_id = $1 order by seq
