-- Records decision $1 of account $2: quota $3, period $4, kind $5, used $6 against limit $7
-- (decimal text), at position $8 (JSON) and time $9 (ms).
insert into quota_decisions (id, account, quota, period, kind, used, quota_limit, position, at_ms)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
