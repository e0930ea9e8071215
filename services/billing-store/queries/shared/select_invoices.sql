-- Issued invoices of account $1 ('': every account; its regions' invoices, stored under
-- `account@region`, with it) and period $2 ('': every period), by period then number, with what each owes after its adjustments, its adjustment lines and
-- its credit note.
select id, number, status, issued_at_ms, pricebook_version, body, coalesce(amount_due, total) as amount_due,
       adjustments, credit_note
from invoices
where ($1 = '' or account = $1 or substr(account, 1, length($1) + 1) = $1 || '@') and ($2 = '' or period = $2) order by period, number
