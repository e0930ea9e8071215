-- What an authorization reads of account $1 in one statement: its quotas and when they were
-- set, its stored provisional cost of period $2 (total, unit-seconds), null for the totals of
-- its invoices since then (spent.rs sums them exactly itself) and its hold revision.
-- No row: no such account.
select q.body, q.updated_at_ms, p.total, p.unit_seconds, null, r.rev
from accounts a left join quotas q on q.account = a.id
left join provisional_costs p on p.account = a.id and p.period = $2
left join hold_revs r on r.account = a.id where a.id = $1
