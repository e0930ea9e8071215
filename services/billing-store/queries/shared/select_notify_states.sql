-- Account $1's remembered states: subject, body (JSON), block (JSON or null), updated_at_ms.
select subject, body, block, updated_at_ms from notify_states where account = $1 order by subject
