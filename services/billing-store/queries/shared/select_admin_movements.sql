-- Wallet movements the admin made (top-ups, refunds, corrections) at [$1, $2) ms: seq,
-- account, kind, amount, reference, at_ms. Settlements and credit notes post with their
-- documents.
select seq, account, kind, amount, reference, at_ms from wallet_movements
where kind in ('topup', 'refund', 'correction') and at_ms >= $1 and at_ms < $2 order by seq
