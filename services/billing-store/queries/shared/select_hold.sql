-- Hold $1.
select id, account, sku, quantity, seconds, amount, lease, status, created_at_ms, expires_at_ms
from holds where id = $1
