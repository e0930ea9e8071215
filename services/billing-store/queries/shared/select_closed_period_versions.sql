-- Every closed period with its [start, end) seconds and the price book version it was closed
-- with, in time order. No parameters.
select period, start_s, end_s, pricebook_version from periods order by start_s
