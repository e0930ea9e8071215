-- What an authorization reads of account $1 in billing domain $3 (the account at home, or
-- `account@region`) in one statement: the domain's quotas and when they were set, its stored
-- provisional cost of period $2 (total, unit-seconds), what its invoices still owe
-- (wallets.outstanding), its hold revision and its wallet balance. No row: no such account.
select q.body, q.updated_at_ms, p.total, p.unit_seconds, w.outstanding, r.rev, w.balance
from accounts a left join quotas q on q.account = $3
left join provisional_costs p on p.account = $3 and p.period = $2
left join hold_revs r on r.account = $3
left join wallets w on w.account = $3 where a.id = $1
