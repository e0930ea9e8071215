-- Every platform fact (spot price points, node faults: stored under account ''). No
-- parameters.
select kind, key, a, b, value from rental_events where account = ''
