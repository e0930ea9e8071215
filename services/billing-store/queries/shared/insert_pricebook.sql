-- Stores price book version $1, effective from $2 (seconds, or null), as TOML $3, uploaded at
-- $4 (ms).
insert into pricebooks (version, effective_from_s, toml, uploaded_at_ms) values ($1, $2, $3, $4)
