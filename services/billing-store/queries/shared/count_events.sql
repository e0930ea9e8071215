-- How many event identities are stored. No parameters.
select count(*) from events
