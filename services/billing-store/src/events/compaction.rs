//! Compaction of identities (`events`): once an event ends before the dedupe horizon and
//! inside a closed period, any redelivery of it is `too_late`, so its identity can go.
//!
//! On PostgreSQL identities are one table with a global unique index on the identity
//! (migration 0028, issue 29), and compaction finds what to drop through `events_by_end`,
//! an index on the event's end: a range of that index, never a scan of the table. (Before,
//! identities were partitioned by month and compaction dropped whole months; that cost every
//! batch a look-up in each month's partition, see `identities.rs`.) SQLite deletes alike,
//! from its one table.

use crate::conn::error::Result;
use crate::conn::handles::LogHandle;

impl LogHandle<'_> {
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
        let dropped = crate::conn::db::query(include_str!(
            "../../queries/shared/delete_compacted_events.sql"
        ))
        .bind(cut)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(dropped)
    }
}
