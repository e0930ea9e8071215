-- Every issued invoice: account, period, id, number, body, issued_at_ms, amount due,
-- adjustment lines, in issue order.
select account, period, id, number, body, issued_at_ms, coalesce(amount_due, total) as amount_due,
  adjustments
from invoices order by issued_at_ms, period, number
