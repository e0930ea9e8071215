-- Payments of the invoices of account $1 ('': every account; its regions' under `account@region` with it), period $2 ('': every period)
-- and id $3 ('': every invoice): invoice_id, amount.
select p.invoice_id, p.amount from invoice_payments p join invoices i on i.id = p.invoice_id
where ($1 = '' or i.account = $1 or substr(i.account, 1, length($1) + 1) = $1 || '@') and ($2 = '' or i.period = $2) and ($3 = '' or i.id = $3)
