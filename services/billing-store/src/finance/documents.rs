//! Issued documents as the store keeps and reads them: invoices (with their adjustment lines,
//! what they owe and what is paid) and credit notes (issue 12). Written by the close
//! (`close.rs`).

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use billing_core::adjustment::AdjustmentLine;
use billing_core::invoice::{Invoice, InvoiceStatus};
use billing_core::timestamp::format_secs;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

crate::conn::words::stored_words! {
    /// What an issued document is: its JSON `kind`.
    pub enum DocumentKind {
        Invoice = "invoice",
        CreditNote = "credit_note",
    }
}

crate::conn::words::stored_words! {
    /// A credit note's state (its JSON `status`): credited to the wallet at issue.
    pub enum CreditNoteStatus {
        Credited = "credited",
    }
}

crate::conn::words::stored_id! {
    /// An invoice's or a credit note's number (`INV-2026-000123`, `CN-2026-000007`): gapless
    /// per series and year, given by the close.
    DocumentNumber
}

pub(crate) fn parse_invoice(body: &str) -> Result<Invoice> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("invoice body: {e}")))
}

/// An issued invoice: the invoice of billing-semantics.md section 6 with its identity, the
/// adjustment lines it carries (section 7), what it owes after them and what is paid of it.
/// `status` is `paid` or `issued` as stored; [`IssuedInvoice::at`] tells `overdue` on the
/// caller's clock.
#[derive(Debug, Clone, Serialize)]
pub struct IssuedInvoice {
    /// Always `invoice` (a credit note says `credit_note`).
    pub kind: DocumentKind,
    pub id: String,
    pub number: DocumentNumber,
    pub status: InvoiceStatus,
    pub issued_at: String,
    pub pricebook_version: i64,
    #[serde(flatten)]
    pub invoice: Invoice,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<AdjustmentLine>,
    /// `total` plus the adjustment lines, never below 0.00.
    pub amount_due: Decimal,
    /// Payments so far (from the wallet at issue, or recorded by the admin).
    pub paid: Decimal,
    /// The credit note issued with this invoice, when its adjustments left one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_note: Option<String>,
    #[serde(skip)]
    pub issued_at_ms: i64,
}

impl IssuedInvoice {
    /// The invoice with its status at `now_ms`: `overdue` when not paid `payment_days` after
    /// issue (`billing_core::adjustment::status`).
    pub fn at(mut self, now_ms: i64, payment_days: i64) -> IssuedInvoice {
        self.status = billing_core::adjustment::status(
            self.amount_due,
            self.paid,
            self.issued_at_ms,
            now_ms,
            payment_days,
        );
        self
    }
}

/// A credit note (issue 12): what an account's negative net adjustment left after its new
/// invoice owed nothing more, credited to the account's wallet. Own number series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreditNote {
    /// Always `credit_note`.
    pub kind: DocumentKind,
    pub id: String,
    pub number: DocumentNumber,
    pub account: String,
    /// Section 19: the region of the invoice it came with (absent for home).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub currency: String,
    /// The period whose close issued it.
    pub period: String,
    pub issued_at: String,
    /// The invoice issued with it (its adjustment lines hold the detail).
    pub invoice_id: String,
    pub invoice_number: DocumentNumber,
    /// The original invoices whose net adjustment was negative, with that net.
    pub references: Vec<CreditReference>,
    /// Positive: what is credited.
    pub amount: Decimal,
    /// `credited` (to the wallet, at issue).
    pub status: CreditNoteStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreditReference {
    pub period: String,
    pub invoice_id: Option<String>,
    pub invoice_number: Option<DocumentNumber>,
    pub amount: Decimal,
}

impl FinanceHandle<'_> {
    /// The labels of the closed periods, in order.
    pub async fn closed_labels(&self) -> Result<Vec<String>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_closed_period_labels.sql"
        ))
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<String> = rows.iter().map(|r| r.get("period")).collect();
        out.sort();
        Ok(out)
    }

    pub async fn period_closed(&self, period_label: &str) -> Result<bool> {
        Ok(crate::conn::db::query(include_str!(
            "../../queries/shared/select_period_closed.sql"
        ))
        .bind(period_label)
        .fetch_optional(&self.pool)
        .await?
        .is_some())
    }

    /// Issued invoices, by account and/or period, ordered by period then number, with what
    /// is paid of each.
    pub async fn invoices(
        &self,
        account: Option<&str>,
        period: Option<&str>,
    ) -> Result<Vec<IssuedInvoice>> {
        let rows = crate::conn::db::query(include_str!("../../queries/shared/select_invoices.sql"))
            .bind(account.unwrap_or(""))
            .bind(period.unwrap_or(""))
            .fetch_all(&self.pool)
            .await?;
        let paid = self.paid_amounts(account, period, None).await?;
        rows.into_iter()
            .map(|r| issued_from_row(r, &paid))
            .collect()
    }

    /// One invoice by id, only when it belongs to `account` (when given).
    pub async fn invoice(&self, id: &str, account: Option<&str>) -> Result<Option<IssuedInvoice>> {
        let row = crate::conn::db::query(include_str!("../../queries/shared/select_invoice.sql"))
            .bind(id)
            .bind(account.unwrap_or(""))
            .fetch_optional(&self.pool)
            .await?;
        let paid = self.paid_amounts(account, None, Some(id)).await?;
        row.map(|r| issued_from_row(r, &paid)).transpose()
    }

    /// Credit notes, by account and/or period, ordered by period then number.
    pub async fn credit_notes(
        &self,
        account: Option<&str>,
        period: Option<&str>,
    ) -> Result<Vec<CreditNote>> {
        crate::conn::db::query(include_str!("../../queries/shared/select_credit_notes.sql"))
            .bind(account.unwrap_or(""))
            .bind(period.unwrap_or(""))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| parse_note(&r.get::<String, _>("body")))
            .collect()
    }

    /// One credit note by id, only when it belongs to `account` (when given).
    pub async fn credit_note(&self, id: &str, account: Option<&str>) -> Result<Option<CreditNote>> {
        crate::conn::db::query(include_str!("../../queries/shared/select_credit_note.sql"))
            .bind(id)
            .bind(account.unwrap_or(""))
            .fetch_optional(&self.pool)
            .await?
            .map(|r| parse_note(&r.get::<String, _>("body")))
            .transpose()
    }

    /// What is paid of each invoice the filters select.
    async fn paid_amounts(
        &self,
        account: Option<&str>,
        period: Option<&str>,
        id: Option<&str>,
    ) -> Result<HashMap<String, Decimal>> {
        let mut out: HashMap<String, Decimal> = HashMap::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_invoice_payments.sql"
        ))
        .bind(account.unwrap_or(""))
        .bind(period.unwrap_or(""))
        .bind(id.unwrap_or(""))
        .fetch_all(&self.pool)
        .await?
        {
            let amount: String = r.get("amount");
            *out.entry(r.get("invoice_id")).or_default() += crate::conn::error::stored(
                amount.parse::<Decimal>().ok(),
                "invoice_payments",
                "amount",
                &amount,
            )?;
        }
        Ok(out)
    }
}

/// A stored credit note's body; an unknown `kind` or `status` in it is an error naming them.
fn parse_note(body: &str) -> Result<CreditNote> {
    serde_json::from_str(body)
        .map_err(|e| StoreError::Corrupt(format!("credit_notes.body holds {body:?}: {e}")))
}

fn issued_from_row(
    r: crate::conn::db::DbRow,
    paid: &HashMap<String, Decimal>,
) -> Result<IssuedInvoice> {
    let invoice = parse_invoice(&r.get::<String, _>("body"))?;
    let due: String = r.get("amount_due");
    let amount_due: Decimal =
        crate::conn::error::stored(due.parse().ok(), "invoices", "amount_due", &due)?;
    let adjustments = match r.get::<Option<String>, _>("adjustments") {
        Some(a) => serde_json::from_str(&a)
            .map_err(|e| StoreError::Corrupt(format!("adjustment lines: {e}")))?,
        None => Vec::new(),
    };
    let id: String = r.get("id");
    // The stored status must be one the code knows, though what is shown follows the payments.
    let stored: String = r.get("status");
    crate::conn::error::stored(InvoiceStatus::parse(&stored), "invoices", "status", &stored)?;
    let mut settled = paid.get(&id).copied().unwrap_or_default();
    settled.rescale(2);
    let issued_at_ms: i64 = r.get("issued_at_ms");
    Ok(IssuedInvoice {
        kind: DocumentKind::Invoice,
        // Paid once the payments cover what it owes (`billing_core::invoice::status`).
        status: billing_core::invoice::status(amount_due, settled),
        id,
        number: DocumentNumber::new(r.get::<String, _>("number")),
        issued_at: format_secs(issued_at_ms.div_euclid(1000)),
        pricebook_version: r.get("pricebook_version"),
        invoice,
        adjustments,
        amount_due,
        paid: settled,
        credit_note: r.get("credit_note"),
        issued_at_ms,
    })
}
