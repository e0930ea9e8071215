//! # billing-store: gpubill's persistent state
//!
//! One code path for SQLite (the embedded default) and PostgreSQL (production), on sqlx's
//! native driver of each (see [`db`]: statements, bound values and rows behind one small
//! interface); each backend has its own migrations with the same tables and meaning
//! (`migrations/sqlite`, `migrations/postgres`).
//!
//! **Every difference between the two backends lives in `dialect.rs`**: one method of
//! [`Backend`] per difference (connecting and migrating, the statements written twice,
//! lists in one parameter, how batches of rows and event identities go in, the monthly
//! partitions of `events`, advisory locks and the writer mutexes, dead letter numbering),
//! with a table of them in its header. The rest of the store does not branch on the backend;
//! it asks the dialect. The driver layer ([`db`]) binds and reads each driver's own types,
//! and the PostgreSQL-only code the dialect chooses (binary `COPY` and arrays in `sql.rs`,
//! digests in `identities.rs`, partitions in `partitions.rs`) stays beside its callers. The
//! schemas' differences are listed, with their reasons, in the test
//! `postgres_and_sqlite_schemas_agree_after_migrations` (tests/backends.rs).
//!
//! The heart is [`Store::ingest`]: a batch of raw records is appended to the log, decoded,
//! deduplicated against the authoritative `events` table, folded into the ledger, and written
//! with its dead letters, late-usage notes and the consumer offset in **one transaction**.
//! A crash anywhere loses nothing and double-counts nothing: either the whole batch and its
//! offset are committed, or none of it is.
//!
//! The SQL lives in `.sql` files beside this code, loaded with `include_str!`:
//! `queries/shared` for statements both databases run alike, `queries/postgres` and
//! `queries/sqlite` for those that differ (one name in both) or that one database alone runs.
//! Each begins with a `--` comment saying what it does and what its parameters are. The rule:
//! SQL text never holds outside data. Event data, account ids and every other value are bound
//! parameters; the only text filled in at run time (a `{filter}`, window conditions, a monthly
//! partition's table name) is text the store writes itself, from integers and fixed fragments
//! (`sql::in_list`, `sql::ONE_ACCOUNT`).

mod accounts;
pub mod actor;
mod adjust;
mod api_keys;
mod authorize;
mod batch;
mod books;
mod capture;
mod catalog;
mod close;
mod close_error;
mod commands;
pub mod db;
mod dead_letters;
mod decisions;
mod dialect;
mod documents;
mod failpoints;
mod fold;
pub mod idempotency;
mod identities;
mod ingest;
mod journal;
mod keys;
mod known;
mod ledger_cache;
mod ledgers;
mod locks;
mod partitions;
mod pricebooks;
mod profiles;
mod provisional;
mod provisional_reads;
mod quota;
mod reads;
mod records;
mod rental;
mod settle;
mod sink;
mod sort;
mod spent;
mod sql;
mod terms;
mod terms_merge;
mod verify;
mod verify_money;
mod wallet;
mod wallet_rows;
mod writes;

pub use accounts::{AccountSummary, MAX_ACCOUNTS_PAGE};
pub use adjust::PendingAdjustment;
pub use api_keys::{ApiKeyInfo, AuditEntry, key_id_of};
pub use books::OLDER_COMPILED_MAX;
pub use catalog::UploadedPriceBook;
pub use close::AutoClose;
pub use close_error::CloseError;
pub use commands::{Command, FoldedPart, PartitionPosition, Positions, Recorded};
pub use decisions::{Decision, DecisionKind};
pub use documents::{
    CreditNote, CreditNoteStatus, CreditReference, DocumentKind, DocumentNumber, IssuedInvoice,
};
pub use failpoints::POINTS as FAIL_POINTS;
pub use fold::Outcome;
pub use idempotency::Claim;
pub use identities::identity;
pub use keys::{ApiKeyId, hash_key, key_id};
pub use known::Known;
pub use ledger_cache::DEFAULT_LEDGER_CACHE_KEYS;
pub(crate) use ledgers::{load_ledger, load_ledgers};
pub use partitions::{month_bounds, partition_month};
pub use pricebooks::PriceBookVersion;
pub use profiles::{ProfileStoreError, SELLER_PROFILE, StoredProfile};
pub use provisional::UnitSeconds;
pub use provisional_reads::Provisional;
pub use quota::{
    Authorization, Balance, Hold, HoldError, HoldId, HoldRequest, HoldStatus, Quotas,
    RUNNING_WINDOW_S,
};
pub use reads::{DeadLetter, LateUsage, OutboxRow};
pub use records::{Part, Position};
pub use settle::{SettleOutcome, Settlement};
pub use sink::EventSink;
pub use terms::{MAX_TERM_BODY_BYTES, MAX_TERM_ID_LEN, StoredTerm, TermError};
pub use verify::{Difference, DifferenceKind, VerifyReport};
pub use wallet::{MovementMade, Wallet, check_amount};
pub use wallet_rows::{AdminMovement, Movement, MovementKind, Payment, PaymentMethod, WalletError};

use billing_core::pricebook::PriceBookError;
use db::Pool;
use std::time::Duration;
use tokio::sync::Mutex;

/// The consumer name of the embedded engine in `consumer_offsets`.
pub const EMBEDDED_CONSUMER: &str = "embedded";

/// A value read from the store that must be known: an unknown one (a status, level or class
/// the code does not have, money that does not parse) is [`StoreError::Corrupt`] naming the
/// table, the column and the value, never a default.
pub(crate) fn stored<T>(value: Option<T>, table: &str, column: &str, raw: &str) -> Result<T> {
    value.ok_or_else(|| StoreError::Corrupt(format!("{table}.{column} holds {raw:?}")))
}

/// An enum of the words a stored column holds (a status, kind, method...): each variant with
/// its word, which is also its JSON. `as_str` is what is written; `parse` reads a word back,
/// `None` for one the code does not know (the reader names where with [`stored`]); `ALL`
/// lists the variants. `parse` has no fallback: it finds the variant whose word it is.
macro_rules! stored_words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored (and JSON) word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The variant a stored word names; `None` for a word the code does not know.
            pub fn parse(word: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == word)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use stored_words;

/// An id the store issues and callers pass back (a hold id, a document number): a string of
/// its own type, so one is not passed where another belongs. Its JSON is the string
/// (`serde(transparent)`), and `{:?}` and `{}` show it as the string would.
macro_rules! stored_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> $name {
                $name(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> $name {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> $name {
                $name(id.to_string())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}
pub(crate) use stored_id;

/// Most records one ingest call takes (the HTTP API enforces it too).
pub const MAX_BATCH_RECORDS: usize = 10_000;

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
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The database of a store. What differs between them is the methods of `dialect.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The output topics the store writes to through its outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    /// Admin commands (price books, accounts, period closes): what `gpubill replay` needs
    /// besides the usage topic to rebuild every projection.
    pub commands: String,
    /// Issued invoices, for finance.
    pub invoices: String,
    /// Quota decisions, for rental backends.
    pub quota: String,
}

impl Default for Topics {
    fn default() -> Self {
        Topics {
            commands: "billing.commands.v1".into(),
            invoices: "billing.invoices.v1".into(),
            quota: "billing.quota.v1".into(),
        }
    }
}

pub struct Store {
    pool: Pool,
    backend: Backend,
    /// One writer at a time per process: batches are folded in log order. Across processes
    /// (PostgreSQL), folds of different partitions run concurrently and everything else takes
    /// turns with them (see [`Store::begin_fold`] and [`Store::begin_write`]).
    writer: Mutex<()>,
    topics: Topics,
    /// Ingest requests waiting for the next group commit (see [`Store::ingest`]).
    ingests: std::sync::Mutex<std::collections::VecDeque<ingest::QueuedIngest>>,
    /// The prefix of invoice numbers (`INV-2026-000123`; see [`Store::with_invoice_prefix`]).
    invoice_prefix: String,
    /// Tests' fail points (see `failpoints`).
    pub(crate) failpoints: failpoints::FailPoints,
    /// The prefix of credit note numbers (`CN-2026-000007`; see
    /// [`Store::with_credit_note_prefix`]).
    credit_note_prefix: String,
    /// Days after issue an unpaid invoice becomes `overdue` (see [`Store::with_payment_days`]).
    payment_days: i64,
    /// Whether a top-up settles the account's unpaid invoices (see
    /// [`Store::with_topup_settlement`]).
    topup_settlement: bool,
    /// Group commits of ingest requests since the store was opened.
    ingest_groups: std::sync::atomic::AtomicU64,
    /// Authorizations waiting for the next group commit (see [`Store::authorize`]).
    authorizations: std::sync::Mutex<Vec<authorize::Queued>>,
    /// Authorizations decide one group at a time (see [`Store::authorize`]); on PostgreSQL
    /// they do not wait for folds, on SQLite (one writer) this is not used.
    holds: Mutex<()>,
    /// Live holds per account with the hold revision they are valid for (see `hold_revs`).
    held_cache: std::sync::Mutex<std::collections::HashMap<String, (i64, Vec<quota::Hold>)>>,
    /// The compiled price book versions (see [`books`]).
    books: std::sync::Arc<books::BookCache>,
    /// How far past the fold's clock an event may end, in seconds (`too_early` beyond).
    max_future_s: i64,
    /// How long identities are kept, in seconds before the fold's clock (`too_late` beyond).
    dedupe_horizon_s: i64,
    /// Microseconds folds of this store waited for their locks (other engines' folds of the
    /// same partitions, closes, uploads), since it was opened.
    fold_lock_wait_us: std::sync::atomic::AtomicU64,
    /// Whether an authorization's commit waits for its WAL flush (PostgreSQL's
    /// `synchronous_commit` for hold transactions; see [`Store::with_durable_holds`]).
    durable_holds: bool,
    /// Accounts' ledgers kept between batches for re-rating (see `ledger_cache`).
    ledger_cache: std::sync::Mutex<ledger_cache::LedgerCache>,
}

/// Default of [`Store::with_dedupe_horizon`]: 90 days, three periods: late usage of the last
/// closed period is still accepted (and adjusted), and the events table holds about three
/// months of identities after `gpubill compact`.
pub const DEFAULT_DEDUPE_HORIZON_S: i64 = 90 * 86_400;

/// Default of [`Store::with_max_future`]: an event may end up to a day after the engine's
/// clock (node clocks drift; a day is far beyond drift and far short of a billing period).
pub const DEFAULT_MAX_FUTURE_S: i64 = 86_400;

impl Store {
    /// Connects (creating a SQLite file when needed) and applies the migrations.
    pub async fn open(url: &str) -> Result<Store> {
        let backend = Backend::of_url(url)?;
        let pool = backend.connect(url).await?;
        crate::db::query(include_str!("../queries/shared/insert_embedded_offset.sql"))
            .bind(EMBEDDED_CONSUMER)
            .execute(&pool)
            .await?;
        Ok(Store {
            pool,
            backend,
            writer: Mutex::new(()),
            topics: Topics::default(),
            ingests: Default::default(),
            ingest_groups: Default::default(),
            invoice_prefix: billing_core::numbering::INVOICE_PREFIX.to_string(),
            failpoints: Default::default(),
            credit_note_prefix: billing_core::numbering::CREDIT_NOTE_PREFIX.to_string(),
            payment_days: billing_core::adjustment::DEFAULT_PAYMENT_DAYS,
            topup_settlement: true,
            authorizations: std::sync::Mutex::new(Vec::new()),
            holds: Mutex::new(()),
            held_cache: Default::default(),
            books: Default::default(),
            max_future_s: DEFAULT_MAX_FUTURE_S,
            dedupe_horizon_s: DEFAULT_DEDUPE_HORIZON_S,
            fold_lock_wait_us: Default::default(),
            durable_holds: true,
            ledger_cache: std::sync::Mutex::new(ledger_cache::LedgerCache::new(
                DEFAULT_LEDGER_CACHE_KEYS,
            )),
        })
    }

    /// The same store numbering invoices `{prefix}-{year}-{nnnnnn}` (default `INV`); `Err`
    /// unless `prefix` is 1 to 16 of `A-Z 0-9`. Every engine on one database (and every
    /// replay of its commands) must use the same prefix.
    pub fn with_invoice_prefix(mut self, prefix: &str) -> Result<Store, String> {
        if !billing_core::numbering::is_prefix(prefix) {
            return Err(format!(
                "invoice prefix {prefix:?}: must be 1 to 16 of A-Z 0-9"
            ));
        }
        self.invoice_prefix = prefix.to_string();
        Ok(self)
    }

    /// The same store numbering credit notes `{prefix}-{year}-{nnnnnn}` (default `CN`); the
    /// same rules as [`Store::with_invoice_prefix`], and it must differ from the invoices'.
    pub fn with_credit_note_prefix(mut self, prefix: &str) -> Result<Store, String> {
        if !billing_core::numbering::is_prefix(prefix) || prefix == self.invoice_prefix {
            return Err(format!(
                "credit note prefix {prefix:?}: must be 1 to 16 of A-Z 0-9, not the invoices' prefix"
            ));
        }
        self.credit_note_prefix = prefix.to_string();
        Ok(self)
    }

    /// The same store calling an invoice `overdue` when it is not paid `days` days after its
    /// issue (default 30; 0 to 3650).
    pub fn with_payment_days(mut self, days: i64) -> Result<Store, String> {
        if !(0..=3650).contains(&days) {
            return Err(format!("payment days {days}: must be 0 to 3650"));
        }
        self.payment_days = days;
        Ok(self)
    }

    /// The same store settling (default) or not settling the account's unpaid invoices from
    /// the wallet when a top-up arrives (issue 24.2; `POST /v1/admin/invoices/{id}/settle`
    /// settles one on demand either way). A replay repeats what each top-up's command says.
    pub fn with_topup_settlement(mut self, on: bool) -> Store {
        self.topup_settlement = on;
        self
    }

    /// Arms the fail point `name` (one of [`failpoints::POINTS`]) to fire once, after letting
    /// `skip` hits pass (tests: "the engine is killed here").
    pub fn arm_failpoint(&self, name: &str, skip: u64) -> Result<(), String> {
        self.failpoints.arm(name, skip)
    }

    /// Days after issue an unpaid invoice becomes `overdue`.
    pub fn payment_days(&self) -> i64 {
        self.payment_days
    }

    /// How many transactions [`Store::ingest`] committed (or tried) for its requests since the
    /// store was opened: fewer than the requests when concurrent ones were grouped.
    pub fn ingest_groups(&self) -> u64 {
        self.ingest_groups
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many price book versions this store holds compiled: the latest and at most
    /// [`OLDER_COMPILED_MAX`] older ones (issue 24.9).
    pub fn compiled_pricebooks(&self) -> usize {
        self.books.held()
    }

    /// How many price books this store compiled (parsed) since it was opened: uploads, and
    /// stored versions compiled on demand.
    pub fn pricebook_compiles(&self) -> u64 {
        self.books.compiles()
    }

    /// How long this store's folds waited for their advisory locks in all (benchmarks: engines
    /// of different partitions should not wait for each other at all).
    pub fn fold_lock_wait(&self) -> Duration {
        Duration::from_micros(
            self.fold_lock_wait_us
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The same store keeping identities for `secs` before the clock of the batch that folds
    /// them: an event ending earlier is refused as `too_late`, and [`Store::compact`] may
    /// drop identities of closed periods older than that. As for `too_early`, a replay takes
    /// the clock from the records' Kafka timestamps.
    /// The same store committing authorizations' holds durably (`true`: each authorization
    /// waits for its WAL flush) or not (`false`, the default). A hold is a reservation of
    /// balance that lives seconds to minutes, not money: what is billed comes from usage
    /// events, which are always committed durably. Without the flush an authorization
    /// answers in about 2 ms whatever the disk does (a flush took 20 to 60 ms in this
    /// machine's slow spells, the authorization p99 stalls of issue 11); a crash may forget
    /// the holds of the last ~0.6 s (3 x `wal_writer_delay`), so for that moment the next
    /// authorizations see that much more balance. SQLite always commits durably.
    pub fn with_durable_holds(mut self, durable: bool) -> Store {
        self.durable_holds = durable;
        self
    }

    /// The same store keeping at most `keys` usage keys of accounts' ledgers in memory
    /// between batches (default [`DEFAULT_LEDGER_CACHE_KEYS`]; 0: every batch reads the
    /// ledgers it re-rates from the database). What is kept is checked against the database
    /// on every use, so any number of engines may share one database whatever this is.
    pub fn with_ledger_cache_keys(self, keys: usize) -> Store {
        *self.ledger_cache.lock().unwrap_or_else(|e| e.into_inner()) =
            ledger_cache::LedgerCache::new(keys);
        self
    }

    /// Usage keys of ledgers kept in memory now (see [`Store::with_ledger_cache_keys`]).
    pub fn ledger_cache_keys(&self) -> usize {
        self.ledger_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
    }

    pub fn with_dedupe_horizon(mut self, secs: i64) -> Store {
        self.dedupe_horizon_s = secs.max(0);
        self
    }

    /// Drops the identities (`events` rows) of events that end before `now_ms` less the
    /// dedupe horizon and inside a closed period: any redelivery of them is `too_late` by
    /// then, so none can count twice, and no invoice reads identities (the ledger holds the
    /// usage). Returns how many were dropped. Rows without a recorded end are kept.
    pub async fn compact(&self, now_ms: i64) -> Result<u64> {
        let cut = now_ms
            .div_euclid(1000)
            .saturating_sub(self.dedupe_horizon_s);
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let whole = self.compact_partitions(&mut tx, cut).await?;
        let dropped = whole
            + crate::db::query(include_str!(
                "../queries/shared/delete_compacted_events.sql"
            ))
            .bind(cut)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(dropped)
    }

    /// The same store refusing (`too_early`) events that end more than `secs` after the clock
    /// of the batch that folds them. In Kafka mode the batch's clock is the wall clock; a
    /// replay uses the records' own Kafka timestamps, so an event refused when it arrived is
    /// refused again.
    pub fn with_max_future(mut self, secs: i64) -> Store {
        self.max_future_s = secs.max(0);
        self
    }

    /// The same store writing its outputs to `topics`.
    pub fn with_topics(mut self, topics: Topics) -> Store {
        self.topics = topics;
        self
    }

    pub fn topics(&self) -> &Topics {
        &self.topics
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        crate::db::query(include_str!("../queries/shared/ping.sql"))
            .fetch_one(&self.pool)
            .await
            .is_ok()
    }

    // ---- settings -------------------------------------------------------------------------

    pub async fn setting(&self, name: &str) -> Result<Option<String>> {
        let row = crate::db::query(include_str!("../queries/shared/select_setting.sql"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.get::<String, _>("value")))
    }

    /// Sets `name` only when unset; returns the value that holds.
    pub async fn setting_or_insert(&self, name: &str, value: &str) -> Result<String> {
        crate::db::query(include_str!("../queries/shared/insert_setting.sql"))
            .bind(name)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(self
            .setting(name)
            .await?
            .unwrap_or_else(|| value.to_string()))
    }
}
