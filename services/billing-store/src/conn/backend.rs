//! Which database a store runs on; what differs between them is `conn::dialect`.

/// The database of a store. What differs between them is the methods of `dialect.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}
