-- Moves the expiry of hold $2 to $1 (ms).
update holds set expires_at_ms = $1 where id = $2
