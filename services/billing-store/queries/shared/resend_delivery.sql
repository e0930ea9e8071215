-- Resend: delivered or failed delivery (endpoint $1, notification $2) back to pending, due at
-- $3 (ms), with a fresh schedule. Nothing when it is pending.
update deliveries set status = 'pending', next_attempt_at_ms = $3, round_attempts = 0
where endpoint = $1 and notification = $2 and status <> 'pending'
