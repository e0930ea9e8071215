//! The connection layer: [`Store`] holds the pool, the backend, the writer locks and the caches
//! every handle shares, and the settings each engine is opened with.

use crate::conn::backend::Backend;
use crate::conn::db::Pool;
use crate::conn::error::Result;
use std::time::Duration;
use tokio::sync::Mutex;

/// The consumer name of the embedded engine in `consumer_offsets`.
pub const EMBEDDED_CONSUMER: &str = "embedded";

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
    /// Notifications (issue 28), for rental backends that prefer Kafka to webhooks.
    pub notifications: String,
}

impl Default for Topics {
    fn default() -> Self {
        Topics {
            commands: "billing.commands.v1".into(),
            invoices: "billing.invoices.v1".into(),
            quota: "billing.quota.v1".into(),
            notifications: "billing.notifications.v1".into(),
        }
    }
}

pub struct Store {
    pub(crate) pool: Pool,
    pub(crate) backend: Backend,
    /// One writer at a time per process: batches are folded in log order. Across processes
    /// (PostgreSQL), folds of different partitions run concurrently and everything else takes
    /// turns with them (see [`Store::begin_fold`] and [`Store::begin_write`]).
    pub(crate) writer: Mutex<()>,
    pub(crate) topics: Topics,
    /// Ingest requests waiting for the next group commit (see [`Store::ingest`]).
    pub(crate) ingests:
        std::sync::Mutex<std::collections::VecDeque<crate::events::ingest_queue::QueuedIngest>>,
    /// The prefix of invoice numbers (`INV-2026-000123`; see [`Store::with_invoice_prefix`]).
    pub(crate) invoice_prefix: String,
    /// Tests' fail points (see `failpoints`).
    pub(crate) failpoints: crate::conn::failpoints::FailPoints,
    /// The prefix of credit note numbers (`CN-2026-000007`; see
    /// [`Store::with_credit_note_prefix`]).
    pub(crate) credit_note_prefix: String,
    /// Section 19 (issue 26): a region's own invoice and credit note series (region →
    /// (invoice prefix, credit note prefix)); a region without one uses the store's.
    pub(crate) region_prefixes: std::collections::BTreeMap<String, (String, String)>,
    /// Days after issue an unpaid invoice becomes `overdue` (see [`Store::with_payment_days`]).
    pub(crate) payment_days: i64,
    /// Whether a top-up settles the account's unpaid invoices (see
    /// [`Store::with_topup_settlement`]).
    pub(crate) topup_settlement: bool,
    /// Group commits of ingest requests since the store was opened.
    pub(crate) ingest_groups: std::sync::atomic::AtomicU64,
    /// How identities go in (PostgreSQL; see `events::identities::Path`).
    pub(crate) identity_path: crate::events::identities::Path,
    /// Authorizations waiting for the next group commit (see [`Store::authorize`]).
    pub(crate) authorizations: std::sync::Mutex<Vec<crate::quota::holds::Queued>>,
    /// Authorizations decide one group at a time (see [`Store::authorize`]); on PostgreSQL
    /// they do not wait for folds, on SQLite (one writer) this is not used.
    pub(crate) holds: Mutex<()>,
    /// Live holds per account with the hold revision they are valid for (see `hold_revs`).
    pub(crate) held_cache:
        std::sync::Mutex<std::collections::HashMap<String, (i64, Vec<crate::quota::holds::Hold>)>>,
    /// The compiled price book versions (see `pricing::books`).
    pub(crate) books: std::sync::Arc<crate::pricing::books::BookCache>,
    /// How far past the fold's clock an event may end, in seconds (`too_early` beyond).
    pub(crate) max_future_s: i64,
    /// How long identities are kept, in seconds before the fold's clock (`too_late` beyond).
    pub(crate) dedupe_horizon_s: i64,
    /// Microseconds folds of this store waited for their locks (other engines' folds of the
    /// same partitions, closes, uploads), since it was opened.
    pub(crate) fold_lock_wait_us: std::sync::atomic::AtomicU64,
    /// Whether an authorization's commit waits for its WAL flush (PostgreSQL's
    /// `synchronous_commit` for hold transactions; see [`Store::with_durable_holds`]).
    pub(crate) durable_holds: bool,
    /// Accounts' ledgers kept between batches for re-rating (see `ledger_cache`).
    pub(crate) ledger_cache: std::sync::Mutex<crate::ledger::ledger_cache::LedgerCache>,
    /// The shard this store is (issue 29; see `shard`): None, the whole deployment.
    pub(crate) shard: Option<crate::shard::key::Shard>,
    /// Records folds of this store left to other shards, since it was opened.
    pub(crate) other_shards: std::sync::atomic::AtomicU64,
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
        crate::conn::db::query(include_str!(
            "../../queries/shared/insert_embedded_offset.sql"
        ))
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
            identity_path: Default::default(),
            invoice_prefix: billing_core::numbering::INVOICE_PREFIX.to_string(),
            failpoints: Default::default(),
            credit_note_prefix: billing_core::numbering::CREDIT_NOTE_PREFIX.to_string(),
            region_prefixes: Default::default(),
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
            ledger_cache: std::sync::Mutex::new(crate::ledger::ledger_cache::LedgerCache::new(
                crate::ledger::ledger_cache::DEFAULT_LEDGER_CACHE_KEYS,
            )),
            shard: None,
            other_shards: Default::default(),
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

    /// The same store numbering `region`'s invoices and credit notes in series of their own,
    /// `{invoice}-{year}-{nnnnnn}` and `{credit_note}-{year}-{nnnnnn}` (section 19: a region
    /// may be a legal entity of its own). Each prefix follows [`Store::with_invoice_prefix`]'s
    /// rules, and no prefix may name two series (an invoice series is never a credit note
    /// series; two regions may share neither). Call after the store-wide prefixes; every
    /// engine on one database and every replay must be given the same.
    pub fn with_region_prefixes(
        mut self,
        region: &str,
        invoice: &str,
        credit_note: &str,
    ) -> Result<Store, String> {
        for p in [invoice, credit_note] {
            if !billing_core::numbering::is_prefix(p) {
                return Err(format!(
                    "region {region:?}: prefix {p:?} must be 1 to 16 of A-Z 0-9"
                ));
            }
        }
        let mut taken: Vec<&str> = vec![&self.invoice_prefix, &self.credit_note_prefix];
        for (r, (i, c)) in &self.region_prefixes {
            if r != region {
                taken.extend([i.as_str(), c.as_str()]);
            }
        }
        if invoice == credit_note || taken.contains(&invoice) || taken.contains(&credit_note) {
            return Err(format!(
                "region {region:?}: prefixes {invoice:?} and {credit_note:?} must differ from each other and from every other series' ({})",
                taken.join(", ")
            ));
        }
        self.region_prefixes.insert(
            region.to_string(),
            (invoice.to_string(), credit_note.to_string()),
        );
        Ok(self)
    }

    /// The invoice and credit note prefixes of a domain's documents (`region` `None`: home).
    pub(crate) fn prefixes_of(&self, region: Option<&str>) -> (&str, &str) {
        match region.and_then(|r| self.region_prefixes.get(r)) {
            Some((i, c)) => (i, c),
            None => (&self.invoice_prefix, &self.credit_note_prefix),
        }
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

    /// Arms the fail point `name` (one of [`crate::conn::failpoints::POINTS`]) to fire once, after letting
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

    /// How many batches' identities went in by one `COPY`, fell back to the slow way, or took
    /// it straight away, since the store was opened (PostgreSQL; all zero on SQLite).
    pub fn identity_paths(&self) -> crate::events::identities::IdentityPaths {
        self.identity_path.counts()
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
    /// between batches (default [`crate::ledger::ledger_cache::DEFAULT_LEDGER_CACHE_KEYS`]; 0: every batch reads the
    /// ledgers it re-rates from the database). What is kept is checked against the database
    /// on every use, so any number of engines may share one database whatever this is.
    pub fn with_ledger_cache_keys(self, keys: usize) -> Store {
        *self.ledger_cache.lock().unwrap_or_else(|e| e.into_inner()) =
            crate::ledger::ledger_cache::LedgerCache::new(keys);
        self
    }

    /// The same store as one shard of a deployment (issue 29): its folds keep the records of
    /// the organization trees `shard` holds and leave the others to their shards (see
    /// [`crate::shard`]). Every shard consumes the usage topic in a consumer group of its own.
    ///
    /// A shard numbers each tree's documents in the tree's own series
    /// (`billing_core::numbering::tree_series`: `INV-corp-2026-000001`), so that no two shards
    /// issue one number and a tree's numbers are the same whichever shard issues them.
    pub fn with_shard(mut self, shard: crate::shard::key::Shard) -> Store {
        self.shard = Some(shard);
        self
    }

    /// The shard this store is, if it is one.
    pub fn shard(&self) -> Option<crate::shard::key::Shard> {
        self.shard
    }

    /// Records this store's folds left to other shards since it was opened.
    pub fn records_for_other_shards(&self) -> u64 {
        self.other_shards.load(std::sync::atomic::Ordering::Relaxed)
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
        crate::conn::db::query(include_str!("../../queries/shared/ping.sql"))
            .fetch_one(&self.pool)
            .await
            .is_ok()
    }
}
