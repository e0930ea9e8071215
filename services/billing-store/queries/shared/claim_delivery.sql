-- Claims due head (endpoint $1, notification $2) for one worker: its next attempt moves to
-- $3 (the lease's end, ms) if it is still pending at $4 with $5 attempts (compare-and-set).
-- No row changed: another worker claimed or attempted it first.
update deliveries set next_attempt_at_ms = $3
where endpoint = $1 and notification = $2 and status = 'pending'
  and next_attempt_at_ms = $4 and attempts_total = $5
