-- Notes platform event ($1 source, $2 id, log sequence $4) as late usage of closed period $3
-- for every account invoiced in it (a note there already is kept).
insert into late_usage (source, id, account, period, log_seq)
select $1, $2, account, $3, $4 from invoices where period = $3 on conflict do nothing
