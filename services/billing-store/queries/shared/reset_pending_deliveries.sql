-- After re-enabling endpoint $1: its pending deliveries due at $2 (ms), each with a fresh
-- schedule (delivered in order from the oldest: due takes heads).
update deliveries set next_attempt_at_ms = $2, round_attempts = 0
where endpoint = $1 and status = 'pending'
