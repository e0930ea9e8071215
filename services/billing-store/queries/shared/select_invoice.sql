-- Invoice $1, when it belongs to account $2 ('': any account); columns as select_invoices.sql.
select id, number, status, issued_at_ms, pricebook_version, body, coalesce(amount_due, total) as amount_due,
       adjustments, credit_note
from invoices where id = $1 and ($2 = '' or account = $2)
