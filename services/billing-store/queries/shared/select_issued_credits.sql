-- The issued invoices of the accounts `filter` selects (bound as $1: one account, or a
-- list of them through crate::sql::in_list), then the recomputations adjustments were
-- issued against (issue 12): account, period, credit consumed, body, rank. Per (account,
-- period) the row of the highest rank is what the period effectively says.
select account, period, credit, body, 0 as rank from invoices where {filter}
union all
select account, period, credit, body, seq as rank from adjustments where {filter}
order by 1, 2, 5
