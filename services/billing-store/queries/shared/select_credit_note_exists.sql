-- Whether $1 is a credit note's id: one row when it is.
select 1 from credit_notes where id = $1
