//! Reads of the log and its outputs: event and offset counts, dead letters, the outbox the
//! relay publishes, late usage pending adjustment, the platform's facts.

use crate::conn::error::Result;
use crate::conn::handles::LogHandle;
use crate::conn::sql;
use crate::conn::store::EMBEDDED_CONSUMER;
use crate::ledger::rental;

/// A dead-lettered record.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeadLetter {
    pub seq: i64,
    pub log_seq: Option<i64>,
    pub reason: billing_core::event::RejectReason,
    pub detail: String,
    pub source: Option<String>,
    pub event_id: Option<String>,
    /// The record as received (lossy UTF-8).
    pub payload: String,
    pub created_at_ms: i64,
}

/// An output waiting to be relayed to Kafka; `seq` is its stable id for consumers to dedupe.
#[derive(Debug, Clone)]
pub struct OutboxRow {
    pub seq: i64,
    pub topic: String,
    pub key: String,
    pub payload: String,
    pub headers: std::collections::BTreeMap<String, String>,
}

/// Usage that arrived for a closed period (section 7), pending adjustment.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LateUsage {
    pub account: String,
    pub period: String,
    pub source: String,
    pub id: String,
    pub log_seq: i64,
}

impl LogHandle<'_> {
    /// Distinct events admitted (for tests and status).
    pub async fn event_count(&self) -> Result<i64> {
        Ok(
            crate::conn::db::query(include_str!("../../queries/shared/count_events.sql"))
                .fetch_one(&self.pool)
                .await?
                .get("n_events"),
        )
    }

    /// The next log sequence the engine will fold.
    pub async fn next_offset(&self) -> Result<i64> {
        Ok(crate::conn::db::query(include_str!(
            "../../queries/shared/select_embedded_offset.sql"
        ))
        .bind(EMBEDDED_CONSUMER)
        .fetch_one(&self.pool)
        .await?
        .get("next_offset"))
    }

    // ---- dead letters and late usage --------------------------------------------------------

    pub async fn dead_letters(&self, after_seq: i64, limit: i64) -> Result<Vec<DeadLetter>> {
        let rows =
            crate::conn::db::query(include_str!("../../queries/shared/select_dead_letters.sql"))
                .bind(after_seq)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter()
            .map(|r| {
                let reason: String = r.get("reason");
                Ok(DeadLetter {
                    seq: r.get("seq"),
                    log_seq: r.get("log_seq"),
                    reason: crate::conn::error::stored(
                        billing_core::event::RejectReason::parse(&reason),
                        "dead_letters",
                        "reason",
                        &reason,
                    )?,
                    detail: r.get("detail"),
                    source: r.get("source"),
                    event_id: r.get("event_id"),
                    payload: String::from_utf8_lossy(&r.get::<Vec<u8>, _>("payload")).into_owned(),
                    created_at_ms: r.get("created_at_ms"),
                })
            })
            .collect()
    }

    /// Outbox rows not yet published, oldest first.
    pub async fn outbox_pending(&self, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_outbox_pending.sql"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                // No headers (null) is none; headers that do not parse are corrupt.
                let headers = match r.get::<Option<String>, _>("headers") {
                    Some(h) => crate::conn::error::stored(
                        serde_json::from_str(&h).ok(),
                        "outbox",
                        "headers",
                        &h,
                    )?,
                    None => Default::default(),
                };
                Ok(OutboxRow {
                    seq: r.get("seq"),
                    topic: r.get("topic"),
                    key: r.get("key"),
                    payload: r.get("payload"),
                    headers,
                })
            })
            .collect()
    }

    /// Marks outbox rows as published (after the broker acknowledged them).
    pub async fn outbox_published(&self, seqs: &[i64], now_ms: i64) -> Result<()> {
        // One statement per chunk, not one per row: the relay marks up to 500 at a time.
        for chunk in seqs.chunks(sql::MAX_IN_LIST) {
            let list: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let stmt = include_str!("../../queries/shared/mark_outbox_published.sql")
                .replace("{seqs}", &list.join(","));
            let mut q = crate::conn::db::query(&stmt).bind(now_ms);
            for s in chunk {
                q = q.bind(*s);
            }
            q.execute(&self.pool).await?;
        }
        Ok(())
    }

    /// The platform's spot curves and node faults (billing-semantics sections 9 and 10), as
    /// every account's rating reads them.
    pub async fn platform(&self) -> Result<billing_core::platform::Platform> {
        let mut conn = self.pool.acquire().await?;
        rental::load_platform(&mut conn).await
    }

    pub async fn late_usage(&self, period: Option<&str>) -> Result<Vec<LateUsage>> {
        let rows =
            crate::conn::db::query(include_str!("../../queries/shared/select_late_usage.sql"))
                .bind(period.unwrap_or(""))
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .map(|r| LateUsage {
                account: r.get("account"),
                period: r.get("period"),
                source: r.get("source"),
                id: r.get("id"),
                log_seq: r.get("log_seq"),
            })
            .collect())
    }
}
