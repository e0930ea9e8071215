-- Account $1's issued invoices not yet paid, issued at or before $2 (ms): what they owe.
select coalesce(amount_due, total) as amount_due from invoices
where account = $1 and status = 'issued' and issued_at_ms <= $2
