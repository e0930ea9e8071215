-- Account $1's next notification sequence number.
select coalesce(max(seq), 0) + 1 as seq from notifications where account = $1
