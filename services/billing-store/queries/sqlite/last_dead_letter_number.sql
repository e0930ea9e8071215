-- The highest dead-letter number ever given (AUTOINCREMENT's counter; 0 before the first).
select coalesce((select seq from sqlite_sequence where name = 'dead_letters'), 0) as seq
