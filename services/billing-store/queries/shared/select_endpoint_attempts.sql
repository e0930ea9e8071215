-- The attempts of endpoint $1's deliveries of notifications from $2 on, in order.
select notification, attempt, at_ms, status_code, error, latency_ms
from delivery_attempts
where endpoint = $1 and notification >= $2
order by notification, attempt
