-- Where automatic closing starts looking: the first second of any usage or egress kept (the
-- ledger and egress are never compacted). No parameters; null when nothing was metered.
select min(s) as first_s from (
    select min(first_s) as s from ledger_keys
    union all
    select min(time_s) as s from egress
) as firsts
