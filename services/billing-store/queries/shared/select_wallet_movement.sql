-- Account $1's movement with reference $2: seq, kind, amount, reference, document_id, at_ms.
select seq, kind, amount, reference, document_id, at_ms from wallet_movements
where account = $1 and reference = $2
