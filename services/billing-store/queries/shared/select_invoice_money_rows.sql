-- Every issued invoice's stored money fields (issue 24.3, verify): id, account, number,
-- status, credit, total, body, amount due, issued_at_ms, in issue order.
select id, account, number, status, credit, total, body, coalesce(amount_due, total) as amount_due, issued_at_ms
from invoices order by issued_at_ms, number
