-- The outbox's due heads at $1 (ms), at most $2, oldest first: for each enabled (not
-- disabled) and live (not deleted) endpoint, its pending delivery with the lowest
-- notification id, when its next attempt is at or before $1.
select d.endpoint, d.notification, d.attempts_total, d.round_attempts, d.next_attempt_at_ms,
       e.account as endpoint_account, e.url, e.secret, e.previous_secret,
       e.previous_secret_expires_at_ms, e.event_types, e.failing_since_ms,
       n.account, n.seq, n.type, n.payload, n.created_at_ms
from deliveries d
join webhook_endpoints e on e.id = d.endpoint
join notifications n on n.id = d.notification
where d.status = 'pending' and d.next_attempt_at_ms <= $1
  and e.disabled_at_ms is null and e.deleted_at_ms is null
  and d.notification = (select min(p.notification) from deliveries p
                        where p.endpoint = d.endpoint and p.status = 'pending')
order by d.notification
limit $2
