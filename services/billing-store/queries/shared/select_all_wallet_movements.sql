-- Every wallet movement (issue 24.3, verify): account, kind, amount, reference, document_id.
select account, kind, amount, reference, document_id from wallet_movements order by seq
