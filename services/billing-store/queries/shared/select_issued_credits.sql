-- The issued invoices of the accounts `filter` selects (bound as $1: one account, or a JSON
-- array of them through crate::sql::in_json_array): period, credit consumed, body.
select account, period, credit, body from invoices where {filter}
