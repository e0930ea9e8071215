-- The recomputations adjustments of account $1 were issued against: period, body, in the
-- order they were issued (the last of a period is what it effectively says).
select period, body from adjustments where account = $1 order by period, seq
