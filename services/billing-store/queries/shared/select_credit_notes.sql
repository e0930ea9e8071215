-- Credit notes of account $1 ('': every account; its regions' notes, stored under
-- `account@region`, with it) and period $2 ('': every period), by period then number: body.
select body from credit_notes
where ($1 = '' or account = $1 or substr(account, 1, length($1) + 1) = $1 || '@') and ($2 = '' or period = $2) order by period, number
