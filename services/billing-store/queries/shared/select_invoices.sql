-- Issued invoices of account $1 ('': every account) and period $2 ('': every period), by
-- period then number.
select id, number, status, issued_at_ms, pricebook_version, body from invoices
where ($1 = '' or account = $1) and ($2 = '' or period = $2) order by period, number
