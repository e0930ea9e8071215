-- Every recomputation adjustments were issued against: account, period, closed_period,
-- document_id, body, issued_at_ms, in issue order.
select account, period, closed_period, document_id, body, issued_at_ms from adjustments
order by issued_at_ms, account, period
