-- Invoice $1, when it belongs to account $2 ('': any account).
select id, number, status, issued_at_ms, pricebook_version, body from invoices
where id = $1 and ($2 = '' or account = $2)
