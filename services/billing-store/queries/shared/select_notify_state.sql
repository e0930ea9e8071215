-- What the rule of subject $2 remembers for account $1: body (JSON).
select body from notify_states where account = $1 and subject = $2
