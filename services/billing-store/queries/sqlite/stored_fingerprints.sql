-- The stored fingerprints of a JSON array of {s, i} identities (by the primary key).
select e.source, e.id, e.fingerprint from json_each($1) j
join events e on e.source = json_extract(j.value, '$.s') and e.id = json_extract(j.value, '$.i')
