-- Invoice $1, when it belongs to account $2 ('': any account; its regions', stored under `account@region`, with it); columns as select_invoices.sql.
select id, number, status, issued_at_ms, pricebook_version, body, coalesce(amount_due, total) as amount_due,
       adjustments, credit_note
from invoices where id = $1 and ($2 = '' or account = $2 or substr(account, 1, length($2) + 1) = $2 || '@')
