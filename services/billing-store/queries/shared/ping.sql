-- Whether the database answers. No parameters.
select 1
