-- Every adjustment's recomputation (issue 24.3, verify): account, period, closed_period,
-- credit, body.
select account, period, closed_period, credit, body from adjustments
order by account, period, closed_period
