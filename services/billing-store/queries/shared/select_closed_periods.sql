-- Every closed period with its [start, end) seconds. No parameters.
select period, start_s, end_s from periods
