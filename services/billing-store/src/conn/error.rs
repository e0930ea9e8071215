//! The store's error type and the rule for values read back from it.

use billing_core::pricebook::PriceBookError;

/// Most records one ingest call takes (the HTTP API enforces it too).
pub const MAX_BATCH_RECORDS: usize = 10_000;

/// A value read from the store that must be known: an unknown one (a status, level or class
/// the code does not have, money that does not parse) is [`StoreError::Corrupt`] naming the
/// table, the column and the value, never a default.
pub(crate) fn stored<T>(value: Option<T>, table: &str, column: &str, raw: &str) -> Result<T> {
    value.ok_or_else(|| StoreError::Corrupt(format!("{table}.{column} holds {raw:?}")))
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database url {0:?}: use sqlite://PATH or postgres://...")]
    UnsupportedUrl(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error(
        "the consumer offset moved under us (expected {expected}): another writer owns this log"
    )]
    Fenced { expected: i64 },
    #[error("account {0:?} already exists")]
    AccountExists(String),
    /// Issue 29: a batch holds records of a tree that is moving to this shard; it is folded
    /// again once the move is done (the Kafka engine retries from the stored offsets).
    #[error("the tree {root:?} is moving to this shard: its records wait for the move to finish")]
    TreeMoving { root: String },
    /// Issue 29: a move of a tree between shards that cannot be done, and why.
    #[error("cannot move the tree {root:?}: {why}")]
    Move { root: String, why: String },
    /// Issue 29: an organization change that would split a tree across shards.
    #[error("{0}")]
    SplitTree(String),
    /// Issue 29: the directory of shards refuses a change, and why.
    #[error("shard directory: {0}")]
    Directory(String),
    /// Section 18: an account that does not pay for itself has no invoice of its own.
    #[error(
        "account {account:?} does not pay for itself: its cost is on the invoice of its payer {payer:?}, allocated by account (GET /v1/allocation)"
    )]
    PaidByPayer { account: String, payer: String },
    /// Section 18: an issued invoice of a payer with members carries its allocation only when
    /// the price book has an `allocation_tag`.
    #[error(
        "the invoice of {payer:?} for {period} was issued without an allocation: the price book had no allocation_tag"
    )]
    NoAllocation { payer: String, period: String },
    #[error("invalid price book: {0}")]
    PriceBook(#[from] PriceBookError),
    #[error("batch of {0} records is over the limit of {MAX_BATCH_RECORDS}")]
    BatchTooLarge(usize),
    /// Another request of the same group commit failed it (see [`Store::ingest`]); nothing of
    /// the group was written, so the request may be retried as it is.
    #[error("the batch was committed with others and their transaction failed: {0}")]
    Group(String),
    /// A test's fail point fired (see `failpoints`): the transaction was abandoned there.
    #[error("fail point {0} fired: the transaction was abandoned there")]
    FailPoint(&'static str),
}

impl StoreError {
    /// A transaction PostgreSQL aborted to break a deadlock or a serialization conflict
    /// (SQLSTATE 40P01, 40001): nothing of it was written and it may simply run again. Two
    /// folds meet this way only when one account's records arrive on two partitions.
    pub fn is_retryable(&self) -> bool {
        match self {
            StoreError::Db(sqlx::Error::Database(e)) => {
                matches!(e.code().as_deref(), Some("40P01") | Some("40001"))
            }
            StoreError::TreeMoving { .. } => true,
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
