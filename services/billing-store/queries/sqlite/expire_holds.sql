-- Marks the live holds past their expiry at $1 of the accounts in $2 (a JSON array).
update holds set status = 'expired', closed_at_ms = expires_at_ms
where status = 'live' and expires_at_ms <= $1
  and account in (select value from json_each($2))
