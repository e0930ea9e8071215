-- Account $1's movements in order: seq, kind, amount, reference, document_id, at_ms.
select seq, kind, amount, reference, document_id, at_ms from wallet_movements
where account = $1 order by seq
