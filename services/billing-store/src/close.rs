//! Closing a period: rating every account with the period's price book version and issuing
//! immutable invoices, in one transaction.

use crate::commands::{self, Command};
use crate::sql::{Val, insert_rows};
use crate::{Result, Store, StoreError};
use billing_core::invoice::Invoice;
use billing_core::numbering;
use billing_core::rating::{RatingContext, Unpriced, rate_account};
use billing_core::timestamp::format_secs;
use serde::Serialize;
use sqlx::Row;
use std::collections::BTreeSet;

#[derive(Debug, thiserror::Error)]
pub enum CloseError {
    #[error("no price book version applies to period {0}")]
    NoPriceBook(String),
    #[error(
        "period {period} has not ended yet (it ends at {ends}): an invoice issued now could never change"
    )]
    NotEnded { period: String, ends: String },
    #[error("period {period} has unpriced usage: {}", describe(.unpriced))]
    Unpriced {
        period: String,
        unpriced: Vec<Unpriced>,
    },
    #[error("period {0} is not closed")]
    NotClosed(String),
    #[error("{0}")]
    Rating(#[from] billing_core::rating::RatingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for CloseError {
    fn from(e: sqlx::Error) -> Self {
        CloseError::Store(StoreError::Db(e))
    }
}

fn describe(u: &[Unpriced]) -> String {
    u.iter()
        .take(10)
        .map(|u| {
            let what = u
                .sku
                .as_deref()
                .map(|s| format!("sku {s:?}"))
                .or(u.dest.as_ref().map(|d| format!("egress to {d:?}")))
                .unwrap_or_default();
            format!(
                "account {:?} {what} ({} {:?}: {})",
                u.account, u.quantity, u.unit, u.why
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// An issued invoice: the invoice of billing-semantics.md section 6 with its identity.
#[derive(Debug, Clone, Serialize)]
pub struct IssuedInvoice {
    pub id: String,
    pub number: String,
    pub status: String,
    pub issued_at: String,
    pub pricebook_version: i64,
    #[serde(flatten)]
    pub invoice: Invoice,
}

/// What one automatic close did (see [`Store::close_due`]).
#[derive(Debug, Default)]
pub struct AutoClose {
    /// Periods due and closed now (or found closed by another engine in the meantime).
    pub closed: Vec<String>,
    /// The first due period that could not be closed, and why (unpriced usage, no price
    /// book): later periods wait for it, as credits carry from one period to the next.
    pub blocked: Option<(String, CloseError)>,
}

impl Store {
    /// Closes, in order, every period whose end plus `grace_s` is at or before `now_ms` and
    /// that is not closed yet, from the first period with usage or egress on (issue 12,
    /// `serve --close-grace`). The caller reads the clock; the store decides nothing about
    /// time but what `billing_core::period::due_for_close` says. Each close is
    /// [`Store::close_period`]: under the exclusive writer lock, so engines racing on one
    /// database close a period once and the others get the same invoices. Stops at the first
    /// period refused for unpriced usage or a missing price book ([`AutoClose::blocked`]).
    pub async fn close_due(&self, now_ms: i64, grace_s: i64) -> Result<AutoClose, CloseError> {
        let mut done = AutoClose::default();
        let Some(from_s) = sqlx::query(include_str!("../queries/shared/select_close_start.sql"))
            .fetch_one(&self.pool)
            .await?
            .get::<Option<i64>, _>(0)
        else {
            return Ok(done);
        };
        let tz = {
            let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
            match self.books(&mut conn).await?.1.timezone() {
                Some(tz) => tz,
                None => return Ok(done),
            }
        };
        let closed: BTreeSet<String> = sqlx::query(include_str!(
            "../queries/shared/select_closed_period_labels.sql"
        ))
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|r| r.get(0))
        .collect();
        let now_s = now_ms.div_euclid(1000);
        for period in billing_core::period::due_for_close(from_s, now_s, grace_s, tz) {
            if closed.contains(&period.label) {
                continue;
            }
            match self.close_period(&period.label, now_ms).await {
                Ok(_) => done.closed.push(period.label),
                Err(e @ (CloseError::Unpriced { .. } | CloseError::NoPriceBook(_))) => {
                    done.blocked = Some((period.label, e));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Issues the invoices of `period_label` for every account (named by an event, registered,
    /// or in the price book's terms). Closing a closed period returns the same invoices.
    pub async fn close_period(
        &self,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        let _w = self.writer.lock().await;
        // Taken before reading anything: the ledger read below is the one at `positions`.
        let mut tx = self.begin_write().await?;
        match self.close_in(&mut tx, period_label, now_ms).await {
            Ok(out) => {
                tx.commit().await?;
                Ok(out)
            }
            Err(e) => {
                tx.rollback().await?;
                Err(e)
            }
        }
    }

    async fn close_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        if self.period_closed(period_label).await? {
            return Ok(self.invoices(None, Some(period_label)).await?);
        }
        let (version, period) = self
            .pricebook_for(period_label)
            .await?
            .ok_or_else(|| CloseError::NoPriceBook(period_label.to_string()))?;
        if period.end.saturating_mul(1000) > now_ms {
            return Err(CloseError::NotEnded {
                period: period_label.to_string(),
                ends: format_secs(period.end),
            });
        }
        let issued = self
            .rate_for_close(&version.book, &period, period_label)
            .await?;
        let positions = commands::positions(tx).await?;
        let out = self
            .issue(
                tx,
                period_label,
                (version.version, version.book.timezone),
                issued,
                now_ms,
            )
            .await?;
        sqlx::query(include_str!("../queries/shared/insert_period.sql"))
            .bind(period_label)
            .bind(period.start)
            .bind(period.end)
            .bind(version.version)
            .bind(now_ms)
            .execute(&mut **tx)
            .await?;
        // The closed period's provisional costs give way to its invoices; later periods are
        // re-rated (the credits these invoices consumed are gone for them).
        let books = self.books(tx).await.map_err(CloseError::from)?;
        crate::provisional::refresh_all(tx, self.backend, &books.1, now_ms)
            .await
            .map_err(CloseError::from)?;
        self.record_command(
            tx,
            &Command::ClosePeriod {
                period: period_label.to_string(),
                at_ms: now_ms,
                positions,
            },
            now_ms,
        )
        .await?;
        Ok(out)
    }

    /// Every account's invoice for the period (named by an event, registered, or in the
    /// price book's terms), with the credit each has left; refuses while usage is unpriced.
    async fn rate_for_close(
        &self,
        book: &billing_core::PriceBook,
        period: &billing_core::Period,
        period_label: &str,
    ) -> Result<Vec<Invoice>, CloseError> {
        let platform = {
            let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
            crate::rental::load_platform(&mut conn).await?
        };
        let ctx = RatingContext::with_platform(book, period.clone(), &platform);
        let mut accounts: BTreeSet<String> = self.known_accounts().await?;
        accounts.extend(book.accounts().into_iter().map(String::from));
        let mut issued = Vec::new();
        let mut unpriced = Vec::new();
        for account in &accounts {
            let ledger = self.account_ledger(account).await?;
            let before = {
                let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
                crate::provisional::issued_credits(&mut conn, crate::sql::ONE_ACCOUNT, account)
                    .await?
            };
            let before = before.get(account.as_str()).map_or(&[][..], Vec::as_slice);
            let balance = crate::provisional::credit_balance(book, account, before, period);
            let rated = rate_account(&ctx, account, Some(&ledger), balance)?;
            unpriced.extend(rated.unpriced);
            issued.push(rated.invoice);
        }
        if !unpriced.is_empty() {
            return Err(CloseError::Unpriced {
                period: period_label.to_string(),
                unpriced,
            });
        }
        Ok(issued)
    }

    /// The invoice of `account` for the closed period `period_label` rated again over the
    /// ledger as it is now (late usage included), exactly as the close rated it otherwise:
    /// with the price book version the period was closed with (not the one applicable now)
    /// and the credit balance the account had at that close, after its invoices of earlier
    /// periods only (not the credit the invoice itself drew, nor later periods' draws).
    /// What billing-semantics.md section 7 compares with the issued invoice.
    pub async fn recompute_closed(
        &self,
        account: &str,
        period_label: &str,
    ) -> Result<Invoice, CloseError> {
        let version: i64 = sqlx::query(include_str!("../queries/shared/select_period_version.sql"))
            .bind(period_label)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| CloseError::NotClosed(period_label.to_string()))?
            .get(0);
        let book = self
            .pricebooks()
            .await?
            .into_iter()
            .find(|v| v.version == version)
            .ok_or_else(|| CloseError::NoPriceBook(period_label.to_string()))?
            .book;
        let period = billing_core::Period::month(period_label, book.timezone)
            .map_err(|e| StoreError::Corrupt(format!("closed period {period_label}: {e}")))?;
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let platform = crate::rental::load_platform(&mut conn).await?;
        let issued =
            crate::provisional::issued_credits(&mut conn, crate::sql::ONE_ACCOUNT, account).await?;
        drop(conn);
        let earlier: Vec<_> = issued
            .get(account)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|(label, _, _)| {
                billing_core::Period::month(label, book.timezone)
                    .is_ok_and(|p| p.start < period.start)
            })
            .cloned()
            .collect();
        let balance = crate::provisional::credit_balance(&book, account, &earlier, &period);
        let ctx = RatingContext::with_platform(&book, period, &platform);
        let ledger = self.account_ledger(account).await?;
        Ok(rate_account(&ctx, account, Some(&ledger), balance)?.invoice)
    }

    /// Writes the invoices with their ids and numbers, and their outbox rows. Numbers come
    /// from the invoice series of the issue date's year (`numbering`), taken in this
    /// transaction: gapless and never reused, whatever rolls back.
    async fn issue(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        period_label: &str,
        (version, tz): (i64, chrono_tz::Tz),
        invoices: Vec<Invoice>,
        now_ms: i64,
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        let issued_s = now_ms.div_euclid(1000);
        let issued_at = format_secs(issued_s);
        let year = numbering::year_of(issued_s, tz)
            .ok_or_else(|| StoreError::Corrupt(format!("no calendar year for {issued_at}")))?;
        let first = take_numbers(tx, &self.invoice_prefix, year, invoices.len()).await?;
        let mut rows = Vec::new();
        let mut out = Vec::new();
        for (n, invoice) in invoices.into_iter().enumerate() {
            let id = invoice_id(&invoice.account, period_label);
            let number = numbering::number(&self.invoice_prefix, year, first + n as i64);
            let body =
                serde_json::to_string(&invoice).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            rows.push(vec![
                Val::Text(id.clone()),
                Val::Text(invoice.account.clone()),
                Val::Text(period_label.to_string()),
                Val::Text(number.clone()),
                Val::Text("issued".into()),
                Val::I64(now_ms),
                Val::I64(version),
                Val::Text(invoice.credit.to_string()),
                Val::Text(invoice.total.to_string()),
                Val::Text(body),
            ]);
            out.push(IssuedInvoice {
                id,
                number,
                status: "issued".into(),
                issued_at: issued_at.clone(),
                pricebook_version: version,
                invoice,
            });
        }
        insert_rows(
            tx,
            include_str!("../queries/shared/insert_invoices.sql"),
            "",
            rows,
        )
        .await
        .map_err(StoreError::from)?;
        let outbox: Vec<Vec<Val>> = out
            .iter()
            .map(|i| {
                let payload = serde_json::to_string(i).unwrap_or_default();
                vec![
                    Val::Text(self.topics().invoices.clone()),
                    Val::Text(i.invoice.account.clone()),
                    Val::Text(payload),
                    Val::I64(now_ms),
                ]
            })
            .collect();
        insert_rows(
            tx,
            include_str!("../queries/shared/insert_outbox.sql"),
            "",
            outbox,
        )
        .await
        .map_err(StoreError::from)?;
        Ok(out)
    }

    pub async fn period_closed(&self, period_label: &str) -> Result<bool> {
        Ok(
            sqlx::query(include_str!("../queries/shared/select_period_closed.sql"))
                .bind(period_label)
                .fetch_optional(&self.pool)
                .await?
                .is_some(),
        )
    }

    /// Issued invoices, by account and/or period, ordered by period then number.
    pub async fn invoices(
        &self,
        account: Option<&str>,
        period: Option<&str>,
    ) -> Result<Vec<IssuedInvoice>> {
        let rows = sqlx::query(include_str!("../queries/shared/select_invoices.sql"))
            .bind(account.unwrap_or(""))
            .bind(period.unwrap_or(""))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(issued_from_row).collect()
    }

    /// One invoice by id, only when it belongs to `account` (when given).
    pub async fn invoice(&self, id: &str, account: Option<&str>) -> Result<Option<IssuedInvoice>> {
        let row = sqlx::query(include_str!("../queries/shared/select_invoice.sql"))
            .bind(id)
            .bind(account.unwrap_or(""))
            .fetch_optional(&self.pool)
            .await?;
        row.map(issued_from_row).transpose()
    }
}

fn issued_from_row(r: sqlx::any::AnyRow) -> Result<IssuedInvoice> {
    let body: String = r.get(5);
    let invoice: Invoice = serde_json::from_str(&body)
        .map_err(|e| StoreError::Corrupt(format!("invoice body: {e}")))?;
    Ok(IssuedInvoice {
        id: r.get(0),
        number: r.get(1),
        status: r.get(2),
        issued_at: format_secs(r.get::<i64, _>(3).div_euclid(1000)),
        pricebook_version: r.get(4),
        invoice,
    })
}

/// `inv_` + the first 20 hex digits of SHA-256(account, period): stable, so a replay into an
/// empty database issues invoices with the same ids.
/// Takes the next `n` numbers of `prefix`'s series in `year` (in the caller's transaction)
/// and answers the first of them.
async fn take_numbers(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    prefix: &str,
    year: i32,
    n: usize,
) -> Result<i64> {
    if n == 0 {
        return Ok(1);
    }
    let last: i64 = sqlx::query(include_str!("../queries/shared/take_numbers.sql"))
        .bind(prefix)
        .bind(year)
        .bind(n as i64)
        .fetch_one(&mut **tx)
        .await?
        .get(0);
    Ok(last - n as i64 + 1)
}

pub fn invoice_id(account: &str, period: &str) -> String {
    let h = crate::keys::hash_key(&format!("{}:{account}|{period}", account.len()));
    format!("inv_{}", &h[..20])
}
