-- The TOML of price book version $1.
select toml from pricebooks where version = $1
