-- Late-usage notes: source, id, account, period, log_seq (the rows follow:
-- crate::sql::insert_rows; then insert_late_usage_on_conflict.sql).
insert into late_usage (source, id, account, period, log_seq)
