//! # billing-store: gpubill's persistent state
//!
//! One code path for SQLite (the embedded default) and PostgreSQL (production), on sqlx's
//! native driver of each (see [`db`]: statements, bound values and rows behind one small
//! interface); each backend has its own migrations with the same tables and meaning
//! (`migrations/sqlite`, `migrations/postgres`).
//!
//! **Every difference between the two backends lives in `dialect.rs`**: one method of
//! [`Backend`] per difference (connecting and migrating, the statements written twice,
//! lists in one parameter, how batches of rows and event identities go in, advisory locks and the writer mutexes, dead letter numbering),
//! with a table of them in its header. The rest of the store does not branch on the backend;
//! it asks the dialect. The driver layer ([`db`]) binds and reads each driver's own types,
//! and the PostgreSQL-only code the dialect chooses (binary `COPY` and arrays in `sql.rs`,
//! digests and the optimistic `COPY` of identities in `identities.rs`) stays beside its callers. The
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
//! parameters; the only text filled in at run time (a `{filter}`, window conditions) is text the store writes itself, from integers and fixed fragments
//! (`sql::in_list`, `sql::ONE_ACCOUNT`).

mod admin;
mod conn;
mod events;
mod finance;
mod ledger;
mod notify;
mod pricing;
mod quota;
pub mod shard;
mod webhooks;

pub use admin::accounts::{AccountSummary, MAX_ACCOUNTS_PAGE};
pub use admin::api_keys::{ApiKeyInfo, AuditEntry, KeyGrant, key_id_of};
pub use admin::idempotency::Claim;
pub use admin::keys::{ApiKeyId, KeyRole, NewKey, hash_key, key_id};
pub use admin::{actor, idempotency};
pub use conn::backend::Backend;
pub use conn::db;
pub use conn::error::{MAX_BATCH_RECORDS, Result, StoreError};
pub use conn::failpoints::POINTS as FAIL_POINTS;
pub use conn::handles::{
    AdminHandle, FinanceHandle, LogHandle, NotifyHandle, QuotaHandle, WebhookHandle,
};
pub use conn::store::{
    DEFAULT_DEDUPE_HORIZON_S, DEFAULT_MAX_FUTURE_S, EMBEDDED_CONSUMER, Store, Topics,
};
pub use events::commands::{Command, FoldedPart, PartitionPosition, Positions, Recorded};
pub use events::fold::Outcome;
pub use events::identities::{IdentityPaths, SLOW_AFTER_FALLBACK, copy_data, identity};
pub use events::known::Known;
pub use events::reads::{DeadLetter, LateUsage, OutboxRow};
pub use events::records::{Part, Position};
pub use events::sink::EventSink;
pub use finance::adjust::PendingAdjustment;
pub use finance::allocation::Allocation;
pub use finance::close::AutoClose;
pub use finance::close_error::CloseError;
pub use finance::documents::{
    CreditNote, CreditNoteStatus, CreditReference, DocumentKind, DocumentNumber, IssuedInvoice,
};
pub use finance::profiles::{ProfileStoreError, SELLER_PROFILE, StoredProfile};
pub use finance::settle::{SettleOutcome, Settlement};
pub use finance::verify::{Difference, DifferenceKind, VerifyReport};
pub use finance::wallet::{MovementMade, Wallet, check_amount};
pub use finance::wallet_rows::{
    AdminMovement, Movement, MovementKind, Payment, PaymentMethod, WalletError,
};
pub use ledger::ledger_cache::DEFAULT_LEDGER_CACHE_KEYS;
pub use notify::evaluate::{Block, Ticked};
pub use notify::publish::Published;
pub use notify::reads::{ArrearsView, NotifyState, NotifyView, StoredNotification};
pub use notify::settings::{MAX_BUDGETS_PER_ACCOUNT, NotifyError, NotifySettings};
pub use pricing::books::OLDER_COMPILED_MAX;
pub use pricing::catalog::UploadedPriceBook;
pub use pricing::loaded::UnitSeconds;
pub use pricing::pricebooks::PriceBookVersion;
pub use pricing::provisional_reads::Provisional;
pub use pricing::terms::{MAX_TERM_BODY_BYTES, MAX_TERM_ID_LEN, StoredTerm, TermError};
pub use quota::decisions::{Decision, DecisionKind};
pub use quota::holds::{HoldId, HoldStatus};
pub use quota::limits::{
    Authorization, Balance, Hold, HoldError, HoldRequest, Quotas, RUNNING_WINDOW_S,
};
pub use webhooks::endpoints::{
    DELIVERY_LOG_PAGE_MAX, Delivery, DeliveryAttempt, ENDPOINTS_PER_OWNER_MAX, EndpointChange,
    NewEndpoint, ROTATION_OVERLAP_MS, WebhookEndpoint, WebhookError, WithSecret,
};
pub use webhooks::{LEASE_MS, SqlOutbox};
