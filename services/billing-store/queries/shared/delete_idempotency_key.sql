-- Forgets key $2 of scope $1 (its request failed with a 5xx: a retry runs it again).
delete from idempotency_keys where scope = $1 and key = $2
