-- Creates account $1 at $2 (ms) unless it exists (then nothing is inserted).
insert into accounts (id, created_at_ms) values ($1, $2) on conflict (id) do nothing
