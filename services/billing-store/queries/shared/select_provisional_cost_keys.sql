-- The (account, period) of every stored provisional cost. No parameters.
select account, period from provisional_costs
