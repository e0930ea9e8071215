-- The newest price book version as uploaded: version, TOML, upload time (ms), effective from
-- (seconds, or null). No parameters.
select version, toml, uploaded_at_ms, effective_from_s from pricebooks
order by version desc limit 1
