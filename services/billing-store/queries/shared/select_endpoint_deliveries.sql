-- The delivery log of endpoint $1: its deliveries, newest notification first, at most $2,
-- with the notification's seq and type.
select d.notification, n.seq, n.type, d.status, d.next_attempt_at_ms, d.attempts_total
from deliveries d join notifications n on n.id = d.notification
where d.endpoint = $1
order by d.notification desc
limit $2
