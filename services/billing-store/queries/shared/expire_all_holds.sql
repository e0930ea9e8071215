-- Marks every live hold past its expiry at $1 (ms) expired (of every account; a fold marks
-- only its accounts' with expire_holds.sql).
update holds set status = 'expired', closed_at_ms = expires_at_ms where status = 'live' and expires_at_ms <= $1
