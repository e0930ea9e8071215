-- Every price book version up to $1 with its effective from (seconds, or null), newest first:
-- what choosing the version that rates a period reads before compiling any.
select version, effective_from_s from pricebooks where version <= $1 order by version desc
