-- Every closed period with its [start, end) seconds, the price book version it was closed
-- with and the account term revision it was closed at (migration 0021; null never after it),
-- in time order. No parameters.
select period, start_s, end_s, pricebook_version, terms_rev from periods order by start_s
