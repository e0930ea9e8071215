-- When account $1's quotas were last set (ms), if ever.
select updated_at_ms from quotas where account = $1
