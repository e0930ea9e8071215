//! Section 18's allocation as the engine answers it (`GET /v1/allocation`): a payer's cost in
//! a period split to (member, tag value) cells, from the issued invoice of a closed period or
//! the provisional invoice of an open one.

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::finance::documents::parse_invoice;
use crate::pricing::payers::payer_id;
use billing_core::invoice::{AllocationRow, Invoice};
use billing_core::pricing::allocation_report::whole;
use serde::Serialize;

/// A payer's allocation for one period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Allocation {
    /// The payer whose invoice is allocated.
    pub payer: String,
    pub period: String,
    /// `issued` (a closed period's invoice) or `provisional` (the open period so far).
    pub status: &'static str,
    pub currency: String,
    /// The invoice's total: what the rows add up to.
    pub total: rust_decimal::Decimal,
    pub rows: Vec<AllocationRow>,
}

/// The rows of `invoice`: its allocation, or the invoice as one cell when it was rated alone.
/// `None`: a payer with members whose issued invoice carries no allocation (a price book
/// without `allocation_tag` keeps it off issued invoices, as `gpubill rate` does).
fn rows_of(invoice: &Invoice, alone: bool) -> Option<Vec<AllocationRow>> {
    match &invoice.allocation {
        Some(rows) => Some(rows.clone()),
        None if alone => Some(vec![whole(invoice)]),
        None => None,
    }
}

impl FinanceHandle<'_> {
    /// The allocation of the invoice that holds `account`'s cost in `period_label` (its
    /// payer's, section 18). None: no price book rates the period. A closed period's issued
    /// invoice without allocation, of a payer with members, is [`StoreError::NoAllocation`].
    pub async fn allocation(
        &self,
        account: &str,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Option<Allocation>> {
        let mut conn = self.pool.acquire().await?;
        let closed = self.closed_periods(&mut conn).await?;
        if let Some(c) = closed.iter().find(|c| c.period.label == period_label) {
            let payer = payer_id(&c.book, account);
            let alone = c.book.members_of(&payer).len() == 1;
            let body = crate::conn::db::query(include_str!(
                "../../queries/shared/select_account_invoices.sql"
            ))
            .bind(payer.as_str())
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .find(|r| r.get::<String, _>("period") == period_label)
            .map(|r| r.get::<String, _>("body"));
            let Some(body) = body else {
                return Ok(None);
            };
            let invoice = parse_invoice(&body)?;
            let rows = rows_of(&invoice, alone).ok_or_else(|| StoreError::NoAllocation {
                payer: payer.clone(),
                period: period_label.to_string(),
            })?;
            return Ok(Some(Allocation {
                payer,
                period: period_label.to_string(),
                status: "issued",
                currency: invoice.currency.clone(),
                total: invoice.total,
                rows,
            }));
        }
        drop(conn);
        let mut conn = self.pool.acquire().await?;
        let books = self.books(&mut conn).await?;
        let Some((book, _)) = books.1.for_period(&mut conn, period_label).await? else {
            return Ok(None);
        };
        drop(conn);
        let payer = payer_id(&book, account);
        let Some(p) = self.provisional(&payer, period_label, now_ms).await? else {
            return Ok(None);
        };
        // A provisional invoice always carries its allocation when the payer has members.
        let rows = rows_of(&p.invoice, true).unwrap_or_default();
        Ok(Some(Allocation {
            payer,
            period: period_label.to_string(),
            status: "provisional",
            currency: p.invoice.currency.clone(),
            total: p.invoice.total,
            rows,
        }))
    }
}
