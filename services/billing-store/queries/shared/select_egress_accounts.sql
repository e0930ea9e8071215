-- Every account with an egress record. No parameters.
select distinct account from egress
