-- The answer of key $2 of scope $1: status $3, content type $4, body $5.
update idempotency_keys set status = $3, content_type = $4, response = $5 where scope = $1 and key = $2
