-- Every invoice payment (issue 24.3, verify): invoice_id, amount, method, reference.
select invoice_id, amount, method, reference from invoice_payments order by seq
