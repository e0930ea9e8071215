-- Marks hold $2 released at $1 (ms).
update holds set status = 'released', closed_at_ms = $1 where id = $2
