//! Reads of the provisional cost: an account's period as `GET /v1/cost/current` shows it, and
//! the measures (total, unit-seconds per sku) quotas compare against; the price book versions
//! the reads rate with. The writes are in `provisional.rs`.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::conn::store::Store;
use crate::pricing::books::{Books, BooksKey};
use crate::pricing::provisional::{Measure, UnitSeconds, measure_of, rate_period};
use billing_core::invoice::Invoice;
use rust_decimal::Decimal;
use serde::Serialize;
use std::sync::Arc;

/// An account's period rated so far, as `GET /v1/cost/current` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provisional {
    pub account: String,
    pub period: String,
    pub invoice: Invoice,
    pub unit_seconds: UnitSeconds,
    /// The batch position the figure was computed at (null: rated on read, nothing folded for
    /// this period yet).
    pub position: serde_json::Value,
    pub updated_at_ms: i64,
}

impl FinanceHandle<'_> {
    /// The label of the period containing `now_ms` (latest version's timezone); None: no price
    /// book uploaded yet. Reads the parsed versions from the cache.
    pub async fn period_label_at(&self, now_ms: i64) -> Result<Option<String>> {
        let mut conn = self.pool.acquire().await?;
        Ok(self
            .books(&mut conn)
            .await?
            .1
            .label_of(now_ms.div_euclid(1000)))
    }

    /// `account`'s provisional cost for `period_label`: the stored figure, or (for a period no
    /// batch has touched) the same rating done now. None: no price book rates the period.
    pub async fn provisional(
        &self,
        account: &str,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Option<Provisional>> {
        let mut conn = self.pool.acquire().await?;
        let books = self.books(&mut conn).await?;
        let Some((book, period)) = books.1.for_period(&mut conn, period_label).await? else {
            return Ok(None);
        };
        // Section 18: an account paid for by another has a part of its payer's invoice.
        let payer = crate::pricing::payers::payer_id(&book, account);
        if payer != account {
            return Err(StoreError::PaidByPayer {
                account: account.to_string(),
                payer,
            });
        }
        let row = crate::conn::db::query(include_str!(
            "../../queries/shared/select_provisional_cost.sql"
        ))
        .bind(account)
        .bind(period_label)
        .fetch_optional(&mut *conn)
        .await?;
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(format!("provisional cost: {e}"));
        if let Some(r) = row {
            return Ok(Some(Provisional {
                account: account.to_string(),
                period: period_label.to_string(),
                invoice: serde_json::from_str(&r.get::<String, _>("body")).map_err(corrupt)?,
                unit_seconds: serde_json::from_str(&r.get::<String, _>("unit_seconds"))
                    .map_err(corrupt)?,
                position: r
                    .get::<Option<String>, _>("position")
                    .and_then(|p| serde_json::from_str(&p).ok())
                    .unwrap_or(serde_json::Value::Null),
                updated_at_ms: r.get("updated_at_ms"),
            }));
        }
        let rated = rate_period(&mut conn, account, &book, &period).await?;
        let unit_seconds = billing_core::quota::unit_seconds(&rated.invoice.lines);
        let mut invoice = rated.invoice;
        if invoice.allocation.is_none() {
            invoice.allocation = rated.allocation;
        }
        Ok(Some(Provisional {
            account: account.to_string(),
            period: period_label.to_string(),
            invoice,
            unit_seconds,
            position: serde_json::Value::Null,
            updated_at_ms: now_ms,
        }))
    }
}

/// What quotas measure of (account, period) as `conn` sees it: the stored figure (two columns,
/// no invoice parsed), or the rating done now.
pub(crate) async fn measure(
    conn: &mut dyn Conn,
    books: &Books,
    account: &str,
    label: &str,
) -> Result<Option<Measure>> {
    let row = crate::conn::db::query(include_str!(
        "../../queries/shared/select_provisional_measure.sql"
    ))
    .bind(account)
    .bind(label)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(r) => parse_measure(
            &r.get::<String, _>("total"),
            &r.get::<String, _>("unit_seconds"),
        )
        .map(Some),
        None => rate_measure(conn, books, account, label).await,
    }
}

/// A stored measure from its `total` and `unit_seconds` columns.
pub(crate) fn parse_measure(total: &str, unit_seconds: &str) -> Result<Measure> {
    let total = crate::conn::error::stored(
        total.parse::<Decimal>().ok(),
        "provisional_costs",
        "total",
        total,
    )?;
    let units: UnitSeconds = serde_json::from_str(unit_seconds)
        .map_err(|e| StoreError::Corrupt(format!("provisional unit-seconds: {e}")))?;
    Ok((total, units))
}

/// What quotas measure of (account, period) rated now (no stored figure). None: no price book
/// rates the period.
pub(crate) async fn rate_measure(
    conn: &mut dyn Conn,
    books: &Books,
    account: &str,
    label: &str,
) -> Result<Option<Measure>> {
    let Some((book, period)) = books.for_period(conn, label).await? else {
        return Ok(None);
    };
    let rated = rate_period(conn, account, &book, &period).await?;
    Ok(Some(measure_of(&rated, account)))
}

impl Store {
    /// The price book versions: the latest compiled once, older ones on demand (`books.rs`).
    pub(crate) async fn books(&self, conn: &mut dyn Conn) -> Result<Arc<(BooksKey, Books)>> {
        Books::load(conn, &self.books, true).await
    }
}
