-- Run on every new SQLite connection: write-ahead log, durable commits, waits for a busy
-- writer up to 10 s, foreign keys enforced. No parameters.
pragma journal_mode = wal; pragma synchronous = full; pragma busy_timeout = 10000; pragma foreign_keys = on
