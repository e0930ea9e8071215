-- Marks every unpublished outbox row published at $1 (ms).
update outbox set published_at_ms = $1 where published_at_ms is null
