-- How many rows month partition `name` holds, and how many of them end outside every closed
-- period. No parameters.
select count(*) as n_rows, count(*) filter (where not exists (select 1 from periods p
where e.end_s > p.start_s and e.end_s <= p.end_s)) as n_open from {name} e
