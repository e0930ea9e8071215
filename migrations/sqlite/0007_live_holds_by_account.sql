-- An account's live holds by expiry: what every authorization sums. Expired holds keep the
-- status 'live' until a batch marks them, so the expiry is part of the key.
create index holds_live_by_account on holds (account, expires_at_ms) where status = 'live';
