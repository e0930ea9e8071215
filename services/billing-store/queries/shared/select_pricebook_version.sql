-- Price book version $1 as uploaded: version, TOML, upload time (ms), effective from
-- (seconds, or null).
select version, toml, uploaded_at_ms, effective_from_s from pricebooks where version = $1
