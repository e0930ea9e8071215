-- The TOML of every price book version up to $1, newest first.
select toml from pricebooks where version <= $1 order by version desc
