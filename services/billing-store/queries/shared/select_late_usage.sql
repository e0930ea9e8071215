-- Late-usage notes of period $1 ('': every period), in log order.
select account, period, source, id, log_seq from late_usage where ($1 = '' or period = $1)
order by log_seq, source, id
