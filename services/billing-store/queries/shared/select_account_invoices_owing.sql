-- Account $1's invoices with what they owe after their adjustments: id, number,
-- issued_at_ms, amount due, in issue order (issue 24.2: what the wallet may settle).
select id, number, issued_at_ms, coalesce(amount_due, total) as amount_due from invoices
where account = $1 order by issued_at_ms, number
