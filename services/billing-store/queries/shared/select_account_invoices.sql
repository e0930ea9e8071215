-- The issued invoices of account $1: period, id, number, body (the section 6 invoice).
select period, id, number, body from invoices where account = $1 order by period
