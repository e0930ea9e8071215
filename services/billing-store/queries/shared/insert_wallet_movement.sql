-- A wallet movement: account $1, kind $2, signed amount $3, reference $4, document $5 (or
-- null), at $6 (ms). Nothing when the account has the reference already (the caller reads
-- it back to tell a repeat from a conflict).
insert into wallet_movements (account, kind, amount, reference, document_id, at_ms)
values ($1, $2, $3, $4, $5, $6) on conflict (account, reference) do nothing
