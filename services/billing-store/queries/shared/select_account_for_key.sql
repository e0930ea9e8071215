-- The account API key hash $1 belongs to.
select account from api_keys where key_hash = $1
