-- Marks live holds of the leases in $2 (a JSON array of {a: account, l: lease}) captured at
-- $1, answering their accounts.
update holds set status = 'captured', closed_at_ms = $1
where status = 'live' and expires_at_ms > $1
  and exists (select 1 from json_each($2) j
              where json_extract(j.value, '$.a') = holds.account
                and json_extract(j.value, '$.l') = holds.lease)
returning account
