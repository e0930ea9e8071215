-- The totals of account $1's invoices issued at or after $2 (ms).
select total from invoices where account = $1 and issued_at_ms >= $2
