-- Up to 1,000 log records from sequence $1 on, in order.
select seq, payload from log where seq >= $1 order by seq limit 1000
