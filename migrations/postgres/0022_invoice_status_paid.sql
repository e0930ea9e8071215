-- Issue 24.2: an invoice's stored status follows its payments (`paid` once they cover what it
-- owes, else `issued`); it was always written `issued`, even for an invoice the wallet paid
-- in full at issue. `gpubill verify` checks it.
update invoices set status = 'paid'
where status = 'issued'
  and coalesce((select sum(p.amount::numeric) from invoice_payments p where p.invoice_id = invoices.id), 0)
      >= coalesce(amount_due, total)::numeric;
