-- Every registered account. No parameters.
select id as account from accounts
