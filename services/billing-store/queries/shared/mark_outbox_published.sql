-- Marks outbox rows published at $1 (ms). `seqs` is filled in by the caller with the
-- placeholders $2, $3, ... of the rows' sequences (bound, never written in).
update outbox set published_at_ms = $1 where seq in ({seqs})
