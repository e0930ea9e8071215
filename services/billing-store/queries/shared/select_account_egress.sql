-- The egress of the accounts `filter` selects (bound as $1: one account, or a list of
-- them through crate::sql::in_list), and with `windows` only the egress timed in one
-- of them (` and (...)` of integer conditions written by ledgers.rs; empty: all of it).
select account, dest, time_s, time_ns, bytes, lease from egress where {filter}{windows}
