-- Closes period $1 ([$2, $3) seconds) rated with price book version $4, at $5 (ms).
insert into periods (period, start_s, end_s, pricebook_version, closed_at_ms) values ($1, $2, $3, $4, $5)
