-- What an authorization reads of account $1 in one statement: its quotas and when they were
-- set, its stored provisional cost of period $2 (total, unit-seconds), the totals of its
-- invoices issued since the quotas were set (summed exactly, as text) and its hold revision.
-- No row: no such account.
select q.body, q.updated_at_ms, p.total, p.unit_seconds,
       (select cast(coalesce(sum(cast(i.total as numeric)), 0) as text) from invoices i
        where i.account = a.id and i.issued_at_ms >= coalesce(q.updated_at_ms, 0)),
       r.rev
from accounts a left join quotas q on q.account = a.id
left join provisional_costs p on p.account = a.id and p.period = $2
left join hold_revs r on r.account = a.id where a.id = $1
