-- Log records: seq, payload, received_at_ms (the rows follow: crate::sql::insert_rows).
insert into log (seq, payload, received_at_ms)
