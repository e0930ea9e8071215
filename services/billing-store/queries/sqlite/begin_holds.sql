-- Begins an authorization group (SQLite: no lock, commits always durable): answers ($1, latest
-- price book version, $2, latest account term revision), the columns of PostgreSQL's.
select $1 as locked, (select coalesce(max(version), 0) from pricebooks) as version, $2 as synchronous_commit,
(select coalesce(max(rev), 0) from account_terms) as terms_rev
