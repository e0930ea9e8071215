-- Credit notes of account $1 ('': every account) and period $2 ('': every period), by
-- period then number: body.
select body from credit_notes
where ($1 = '' or account = $1) and ($2 = '' or period = $2) order by period, number
