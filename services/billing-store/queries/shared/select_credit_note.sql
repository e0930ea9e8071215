-- Credit note $1, when it belongs to account $2 ('': any account): body.
select body from credit_notes where id = $1 and ($2 = '' or account = $2)
