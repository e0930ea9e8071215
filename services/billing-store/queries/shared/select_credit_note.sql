-- Credit note $1, when it belongs to account $2 ('': any account; its regions', stored under `account@region`, with it): body.
select body from credit_notes where id = $1 and ($2 = '' or account = $2 or substr(account, 1, length($2) + 1) = $2 || '@')
