-- Marks live holds of the leases in $2 (a JSON array of {a: account, l: lease}) captured at
-- $1, answering their accounts.
update holds set status = 'captured', closed_at_ms = $1
where status = 'live' and expires_at_ms > $1
  and exists (select 1 from json_to_recordset(cast($2 as json)) as x(a text, l text)
              where x.a = holds.account and x.l = holds.lease)
returning account
