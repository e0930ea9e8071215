-- The TOML of every price book version, newest first. No parameters.
select toml from pricebooks order by version desc
