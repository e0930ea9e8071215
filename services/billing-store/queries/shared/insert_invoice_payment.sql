-- A payment of invoice $1: amount $2, method $3 ('wallet' or 'external'), reference $4, at
-- $5 (ms). Nothing when the invoice has the reference already.
insert into invoice_payments (invoice_id, amount, method, reference, at_ms)
values ($1, $2, $3, $4, $5) on conflict (invoice_id, reference) do nothing
