-- The label of every closed period. No parameters.
select period from periods
