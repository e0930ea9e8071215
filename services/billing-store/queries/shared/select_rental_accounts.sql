-- Every account with a rental fact (platform facts are stored under ''). No parameters.
select distinct account from rental_events where account <> ''
