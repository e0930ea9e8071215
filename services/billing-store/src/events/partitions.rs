//! The monthly partitions of PostgreSQL's `events` table (migration 0011): identities are
//! partitioned by the UTC month of their event's end, so that compaction drops whole months
//! and the dedupe horizon spans a handful of partitions.
//!
//! Months are created ahead of the clock by [`Store::maintain_partitions`] (the engines call
//! it when they start and every hour); whatever ends outside them lands in `events_default`,
//! which is correct, only not dropped whole. A month is made as a table of its own, filled
//! with the default partition's rows of that month and then attached, so that it can be
//! made whatever the default partition holds. SQLite keeps one table.

use crate::conn::error::Result;
use crate::conn::handles::LogHandle;
use crate::conn::store::Store;
use chrono::{Datelike, TimeZone, Utc};

/// Months created before the clock's month (late events within the horizon still find one).
const MONTHS_BEHIND: i64 = 3;
/// Months created after the clock's month (the engine runs for a month without maintenance).
const MONTHS_AHEAD: i64 = 2;

/// The month of `end_s` as a month number (year x 12 + month - 1), in UTC.
pub fn partition_month(end_s: i64) -> i64 {
    let t = Utc
        .timestamp_opt(end_s, 0)
        .single()
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    i64::from(t.year()) * 12 + i64::from(t.month0())
}

/// The first second of month `m` and of the month after it.
pub fn month_bounds(m: i64) -> (i64, i64) {
    let start = |m: i64| {
        Utc.with_ymd_and_hms(
            m.div_euclid(12) as i32,
            (m.rem_euclid(12) + 1) as u32,
            1,
            0,
            0,
            0,
        )
        .single()
        .map_or(0, |t| t.timestamp())
    };
    (start(m), start(m + 1))
}

/// The table name of month `m`'s partition: `events_YYYYMM`.
fn partition_name(m: i64) -> String {
    format!("events_{:04}{:02}", m.div_euclid(12), m.rem_euclid(12) + 1)
}

/// The month of a partition's name, when it is a month's partition.
fn month_of_name(name: &str) -> Option<i64> {
    let digits = name.strip_prefix("events_")?;
    if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, mo): (i64, i64) = (digits[..4].parse().ok()?, digits[4..].parse().ok()?);
    Some(y * 12 + mo - 1)
}

impl LogHandle<'_> {
    /// Makes the monthly partitions of `events` from a few months before the clock's month to
    /// two after it (PostgreSQL; nothing on SQLite). Returns how many it made. It takes the
    /// writer lock exclusively, like a close: DDL on `events` waits for the folds in flight.
    pub async fn maintain_partitions(&self, now_ms: i64) -> Result<usize> {
        if !self.backend.month_partitions() {
            return Ok(0);
        }
        let now = partition_month(now_ms.div_euclid(1000));
        let have = self.month_partitions().await?;
        let missing: Vec<i64> = (now - MONTHS_BEHIND..=now + MONTHS_AHEAD)
            .filter(|m| !have.contains(m))
            .collect();
        if missing.is_empty() {
            return Ok(0);
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        for &m in &missing {
            let (from, to) = month_bounds(m);
            // The month's name and bounds, made of integers, are written into the statements:
            // no text from outside reaches them.
            let (name, from, to) = (partition_name(m), from.to_string(), to.to_string());
            for sql in [
                include_str!("../../queries/postgres/create_month_partition.sql"),
                include_str!("../../queries/postgres/constrain_month_partition.sql"),
                include_str!("../../queries/postgres/move_default_rows_to_month.sql"),
                include_str!("../../queries/postgres/attach_month_partition.sql"),
            ] {
                let sql = sql
                    .replace("{name}", &name)
                    .replace("{from}", &from)
                    .replace("{to}", &to);
                crate::conn::db::query(&sql).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        tracing::info!(made = missing.len(), "made monthly partitions of events");
        Ok(missing.len())
    }
}

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
        let whole = self.compact_partitions(&mut tx, cut).await?;
        let dropped = whole
            + crate::conn::db::query(include_str!(
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

impl Store {
    /// Compaction on PostgreSQL: drops each month's partition that lies wholly before `cut`
    /// and holds only identities of closed periods (counting its rows), then deletes what is
    /// left to delete row by row (partitions the horizon cuts through, the default one).
    /// Nothing on SQLite (one table).
    pub(crate) async fn compact_partitions(
        &self,
        tx: &mut crate::conn::db::Tx,
        cut: i64,
    ) -> Result<u64> {
        let mut dropped = 0u64;
        if !self.backend.month_partitions() {
            return Ok(dropped);
        }
        for m in self.month_partitions().await? {
            let (_, to) = month_bounds(m);
            if to > cut {
                continue;
            }
            let name = partition_name(m);
            let row = crate::conn::db::query(
                &include_str!("../../queries/postgres/count_month_partition.sql")
                    .replace("{name}", &name),
            )
            .fetch_one(&mut **tx)
            .await?;
            let (rows, open): (i64, i64) = (row.get("n_rows"), row.get("n_open"));
            if open == 0 {
                crate::conn::db::query(
                    &include_str!("../../queries/postgres/drop_month_partition.sql")
                        .replace("{name}", &name),
                )
                .execute(&mut **tx)
                .await?;
                dropped += rows as u64;
            }
        }
        Ok(dropped)
    }

    /// The months that have a partition of `events`.
    pub(crate) async fn month_partitions(&self) -> Result<Vec<i64>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/postgres/select_event_partitions.sql"
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|r| month_of_name(&r.get::<String, _>("partition")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_and_their_partitions() {
        // 2026-11-30T23:59:59Z and 2026-12-01T00:00:00Z.
        assert_eq!(partition_month(1_796_083_199), 2026 * 12 + 10);
        assert_eq!(partition_month(1_796_083_200), 2026 * 12 + 11);
        assert_eq!(month_bounds(2026 * 12 + 11), (1_796_083_200, 1_798_761_600));
        assert_eq!(partition_name(2026 * 12 + 11), "events_202612");
        assert_eq!(month_of_name("events_202612"), Some(2026 * 12 + 11));
        assert_eq!(month_of_name("events_default"), None);
    }
}
