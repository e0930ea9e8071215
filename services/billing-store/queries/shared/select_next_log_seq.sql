-- The sequence the next record appended to the log gets. No parameters.
select coalesce(max(seq), 0) + 1 as seq from log
