-- Key $2 of scope $1: fingerprint, status (0: running), content_type, response.
select fingerprint, status, content_type, response from idempotency_keys where scope = $1 and key = $2
