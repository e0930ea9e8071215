-- How many event identities are stored. No parameters.
select count(*) as n_events from events
