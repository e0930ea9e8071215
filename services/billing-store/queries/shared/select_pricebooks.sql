-- Every price book version with its TOML, newest first. No parameters.
select version, toml from pricebooks order by version desc
