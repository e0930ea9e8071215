-- The value of setting $1.
select value from settings where name = $1
