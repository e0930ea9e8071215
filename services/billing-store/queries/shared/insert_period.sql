-- Closes period $1 ([$2, $3) seconds) rated with price book version $4, at $5 (ms), fold stamp $6
-- (migration 0020), at account term revision $7 (migration 0021).
insert into periods (period, start_s, end_s, pricebook_version, closed_at_ms, stamp, terms_rev) values ($1, $2, $3, $4, $5, $6, $7)
