-- The profile of account $1 (or of the seller, '@seller') as JSON, and when it was set (ms).
select body, updated_at_ms from account_profiles where account = $1
