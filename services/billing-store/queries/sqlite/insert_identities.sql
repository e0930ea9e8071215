-- Inserts a JSON array of {s, i, f (fingerprint hex), a, q, e} rows, answering the
-- identities inserted (SQLite reads what was there before with stored_fingerprints.sql).
insert into events (source, id, fingerprint, account, log_seq, end_s)
select json_extract(value, '$.s'), json_extract(value, '$.i'), unhex(json_extract(value, '$.f')),
       json_extract(value, '$.a'), json_extract(value, '$.q'), json_extract(value, '$.e')
from json_each($1) where true
on conflict (source, id) do nothing
returning source, id
