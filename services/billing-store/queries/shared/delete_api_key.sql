-- Revokes account $1's API key whose hash starts with $2 (the key id: 16 hex digits).
delete from api_keys where account = $1 and substr(key_hash, 1, 16) = $2
