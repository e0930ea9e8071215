//! The transactions writers open, and the PostgreSQL advisory locks that order them: folds of
//! different log partitions run at once, everything that changes what folds read takes turns
//! with them, and authorization groups serialize only with each other (README, "Concurrent
//! engines"). SQLite serializes writers by itself: there these are plain transactions (the
//! locks are taken by `Backend::advisory_locks`, `dialect.rs`).

use crate::admin::keys::hash_key;
use crate::conn::db::Tx;
use crate::conn::dialect::Statement;
use crate::conn::error::Result;
use crate::conn::store::Store;

/// The PostgreSQL advisory lock every writing transaction holds (any constant; "gpubill").
pub(crate) const WRITER_LOCK: i64 = 0x0067_7075_6269_6c6c;
/// The PostgreSQL advisory lock of one log partition's writers: 64 bits of SHA-256 of the
/// consumer and partition (distinct from the two constants above in all but astronomically
/// unlikely cases, which would only make two writers take turns).
fn partition_lock(consumer: &str, partition: i64) -> i64 {
    let h = hash_key(&format!("{}:{consumer}|{partition}", consumer.len()));
    i64::from_str_radix(&h[..15], 16).unwrap_or(0) | (1 << 62)
}

/// The PostgreSQL advisory lock of authorization groups ("gpuhold").
pub(crate) const HOLDS_LOCK: i64 = 0x0067_7075_686f_6c64;

impl Store {
    /// Begins a transaction that changes what every fold reads or that reads a ledger no fold
    /// may move under it: closes, price book uploads, accounts, quotas, hold releases. On
    /// PostgreSQL it takes the writer advisory lock **exclusively**: it waits for the folds in
    /// flight to commit and holds new ones back until it commits (SQLite serializes writers
    /// by itself).
    pub(crate) async fn begin_write(&self) -> Result<Tx> {
        self.begin_locked(WRITER_LOCK).await
    }

    /// Begins a fold's transaction for the log partitions `parts` (consumer, partition). On
    /// PostgreSQL it takes the writer advisory lock **shared**, so folds of different
    /// partitions run at the same time (engines of one consumer group fold concurrently), and
    /// then one exclusive advisory lock per partition, in sorted order: two writers of one
    /// partition take turns (the stored offsets' compare-and-set then fences the one that lost
    /// the partition). Folds of different partitions write disjoint rows as long as a
    /// partition's accounts are its own (Kafka keys usage by account); where they are not,
    /// PostgreSQL's row locks order them.
    pub(crate) async fn begin_fold(&self, parts: &[(&str, i64)]) -> Result<Tx> {
        let mut tx = self.pool.begin().await?;
        let mut keys: Vec<i64> = parts.iter().map(|(c, p)| partition_lock(c, *p)).collect();
        keys.sort_unstable();
        keys.dedup();
        let t0 = std::time::Instant::now();
        let locked = self
            .backend
            .advisory_locks(&mut *tx, Some(WRITER_LOCK), &keys)
            .await?;
        if locked {
            // Includes the statements' round trips (~0.1 ms each on loopback).
            self.fold_lock_wait_us.fetch_add(
                t0.elapsed().as_micros() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        Ok(tx)
    }

    /// Begins an authorization group's transaction and reads the latest price book version.
    /// On PostgreSQL it takes an advisory lock of its own, in the same statement: authorizations
    /// (which only insert holds) serialize with each other across processes, not with folds and
    /// closes. (The version is read from the statement's snapshot, taken before the lock is
    /// granted: a group that waited while a version was uploaded decides as if it came first.)
    /// On SQLite the caller holds the writer lock.
    pub(crate) async fn begin_holds(&self) -> Result<(Tx, crate::pricing::books::BooksKey)> {
        let mut tx = self.pool.begin().await?;
        let row = crate::conn::db::query(self.backend.sql(Statement::BeginHolds))
            .bind(HOLDS_LOCK)
            .bind(if self.durable_holds { "on" } else { "off" })
            .fetch_one(&mut *tx)
            .await?;
        Ok((tx, (row.get("version"), row.get("terms_rev"))))
    }

    /// A transaction holding PostgreSQL's transaction-scoped advisory lock `key` (SQLite: a
    /// plain transaction).
    async fn begin_locked(&self, key: i64) -> Result<Tx> {
        let mut tx = self.pool.begin().await?;
        self.backend.advisory_locks(&mut *tx, None, &[key]).await?;
        Ok(tx)
    }
}
