-- Dead letters and other outputs carry Kafka headers (JSON object of name -> value).
alter table outbox add column headers text;
