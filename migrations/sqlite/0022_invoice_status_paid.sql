-- Issue 24.2: an invoice's stored status follows its payments (`paid` once they cover what it
-- owes, else `issued`); it was always written `issued`, even for an invoice the wallet paid
-- in full at issue. `gpubill verify` checks it. Amounts are compared in whole cents.
update invoices set status = 'paid'
where status = 'issued'
  and coalesce((select sum(cast(round(cast(p.amount as real) * 100) as integer))
                from invoice_payments p where p.invoice_id = invoices.id), 0)
      >= cast(round(cast(coalesce(amount_due, total) as real) * 100) as integer);
