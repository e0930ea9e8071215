//! The engine: price book versions in memory (issue 24, item 9) and Kafka topics (item 10).
//!
//! ## Price book versions in memory (issue 24, item 9)
//!
//! - A version is held compiled only while it can rate a period being rated: the latest (the
//!   account terms merged in) always; an older one when a period it rates is rated (an open
//!   period a later version's `effective_from` leaves to it), compiled on demand from its
//!   stored TOML and kept in a least-recently-used list of `billing_store::OLDER_COMPILED_MAX`
//!   (2). A closed period re-rated (at a close, by `gpubill verify`, the adjustments preview,
//!   the journal) compiles the version it was closed with for that work and does not keep
//!   it. An upload compiles its own version once and never the earlier ones; the version it
//!   replaces as the latest is dropped. Choosing the version that rates a period reads only
//!   the versions' numbers and `effective_from` (and, of an older version with an
//!   `effective_from`, its timezone, learned once). No cap on a book's size but the API's
//!   10 MiB body.
//! - Whether a period's rating reads the account's whole history (packages, SLA compensation)
//!   is decided by the version that rates it, not by any version ever uploaded.
//!
//! ## Kafka topics (issue 24, item 10)
//!
//! - `serve` in Kafka mode creates its missing topics at start (usage with
//!   `--usage-partitions`, default 4; commands with one partition and `retention.ms=-1`;
//!   invoices, quota decisions and dead letters with one), creating before looking so a
//!   metadata request never auto-creates one with the broker's defaults. Existing topics are
//!   kept as they are, except a commands topic of more than one partition: `serve` refuses to
//!   start, naming it. Brokers that do not answer within 30 s also stop the start.
