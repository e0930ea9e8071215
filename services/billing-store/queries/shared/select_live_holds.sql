-- The live holds of account $1 at $2 (ms), oldest first.
select id, account, sku, quantity, seconds, amount, lease, status, created_at_ms, expires_at_ms
from holds where account = $1 and status = 'live' and expires_at_ms > $2 order by created_at_ms, id
