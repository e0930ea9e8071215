-- Fans notification $1 (account $3, type $4) out to the endpoints that take it: the
-- account's and the platform's (account null), not deleted, whose `event_types` is empty or
-- names the type; each delivery due at once ($2, ms).
insert into deliveries (endpoint, notification, next_attempt_at_ms)
select e.id, $1, $2 from webhook_endpoints e
where (e.account is null or e.account = $3)
  and e.deleted_at_ms is null
  and (e.event_types = '[]' or e.event_types like '%"' || $4 || '"%')
