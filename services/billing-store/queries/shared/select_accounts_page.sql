-- A page of accounts (issue 13: the console's admin pages): ids after $1 in id order, at most
-- $2, each with when it was created and its quotas (JSON, null when none were set) and when
-- they were set.
select a.id, a.created_at_ms, q.body, q.updated_at_ms
from accounts a left join quotas q on q.account = a.id
where a.id > $1
order by a.id
limit $2
