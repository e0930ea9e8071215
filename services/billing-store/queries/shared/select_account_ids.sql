-- Every registered account. No parameters.
select id from accounts
