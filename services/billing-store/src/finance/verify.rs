//! `gpubill verify` (issue 14): the command a finance auditor runs. It recomputes, from the
//! stored events, what the engine derived from them, and reports every difference:
//!
//! - **the ledger**: every account's usage keys folded again from the facts each accepted
//!   usage event left (`usage_facts`, with the ledger's own union) against the stored runs;
//! - **every issued invoice**: its period rated again with the price book version it was
//!   issued with, from the events folded before the close that issued it (usage facts,
//!   egress, rental and platform facts, by their folds' stamps, migration 0020; for closes
//!   before it, by their ingest times) and the credit balance after the invoices and
//!   adjustments issued by then, against the stored body; and its `amount_due` against its
//!   total plus its adjustment lines;
//! - **every adjustment's recomputation** likewise at its issue time.
//!
//! Each is rated with the account terms its close rated with: those of the term revision the
//! issuing close recorded (migration 0021), for a closed period those it was closed with plus
//! the later changes dated into it, as the close did (issue 24.1).
//!
//! Then every stored money figure a later one is computed from (`verify_money.rs`, issue
//! 24.3): invoice columns, statuses, numbering, wallets, payments.
//!
//! Events ingested before migration 0018 left no facts: such a database cannot be verified
//! (its keys are reported as differences, never silently passed).

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::events::known::Known;
use crate::finance::adjust::issued_credit;
use crate::finance::close_error::CloseError;
use crate::finance::documents::parse_invoice;
use crate::pricing::issued::IssuedCredit;
use billing_core::adjustment::{AdjustmentLine, settle};
use billing_core::invoice::Invoice;
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;

/// What `verify` found.
#[derive(Debug, Default, Serialize)]
pub struct VerifyReport {
    pub accounts: usize,
    pub usage_keys: usize,
    pub invoices: usize,
    pub adjustments: usize,
    /// Wallets checked against their movements (issue 24.3, `verify_money`).
    pub wallets: usize,
    pub differences: Vec<Difference>,
}

crate::conn::words::stored_words! {
    /// What a [`Difference`] is about.
    pub enum DifferenceKind {
        /// A usage key's stored runs against its facts folded again.
        Ledger = "ledger",
        /// An invoice's body against its period rated again.
        Invoice = "invoice",
        /// An invoice's `amount_due` against its total plus its adjustment lines.
        AmountDue = "amount_due",
        /// An adjustment's recomputation against its period rated again.
        Adjustment = "adjustment",
        /// The money checks (issue 24.3): an invoice's stored columns.
        InvoiceField = "invoice_field",
        /// An adjustment's stored `credit`.
        AdjustmentField = "adjustment_field",
        /// Document numbers.
        Numbering = "numbering",
        /// A wallet against its movements.
        Wallet = "wallet",
        /// Payments against what they pay.
        Payments = "payments",
    }
}

#[derive(Debug, Serialize)]
pub struct Difference {
    /// `ledger`, `invoice`, `amount_due` or `adjustment`; the money checks (issue 24.3):
    /// `invoice_field`, `adjustment_field`, `numbering`, `wallet` or `payments`.
    pub kind: DifferenceKind,
    pub account: String,
    /// The usage key, the invoice id or the adjusted period.
    pub what: String,
    pub detail: String,
}

/// A stored invoice or adjustment: what rating it again must give.
struct Issued {
    account: String,
    period: String,
    issued_ms: i64,
    /// What the close that issued it knew: the events folded before its stamp (migration
    /// 0020), or for a close before that migration those ingested by its time.
    known: Known,
    /// The account term revision of the close that issued it (migration 0021): the terms it
    /// was rated with (None: the latest).
    terms_rev: Option<i64>,
    invoice: Invoice,
}

impl FinanceHandle<'_> {
    /// See the module docs. `period`: only the invoices and adjustments of that period (the
    /// ledger is checked whole). (Over 80 lines: the auditor's walk, ledgers, stamps, every
    /// invoice rated again, every adjustment, in the order a reader checks them.)
    pub async fn verify(&self, period: Option<&str>) -> Result<VerifyReport, CloseError> {
        let mut report = VerifyReport::default();
        self.verify_ledgers(&mut report).await?;
        self.verify_money(&mut report).await?;
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let mut stamps: BTreeMap<String, i64> = BTreeMap::new();
        let mut terms_revs: BTreeMap<String, i64> = BTreeMap::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_period_stamps.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            if let Some(s) = r.get::<Option<i64>, _>("stamp") {
                stamps.insert(r.get("period"), s);
            }
            if let Some(t) = r.get::<Option<i64>, _>("terms_rev") {
                terms_revs.insert(r.get("period"), t);
            }
        }
        let known = |issuing_period: &str, issued_ms: i64| match stamps.get(issuing_period) {
            Some(s) => Known::BeforeStamp(*s),
            None => Known::ByTime(issued_ms),
        };
        // The account terms the issuing close rated with (issue 24.1).
        let terms_rev = |issuing_period: &str| terms_revs.get(issuing_period).copied();
        let mut invoices = Vec::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_all_invoice_rows.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            let period: String = r.get("period");
            let issued = Issued {
                account: r.get("account"),
                known: known(&period, r.get("issued_at_ms")),
                terms_rev: terms_rev(&period),
                period,
                issued_ms: r.get("issued_at_ms"),
                invoice: parse_invoice(&r.get::<String, _>("body"))?,
            };
            let id: String = r.get("id");
            let lines: Vec<AdjustmentLine> = match r.get::<Option<String>, _>("adjustments") {
                Some(a) => serde_json::from_str(&a)
                    .map_err(|e| StoreError::Corrupt(format!("adjustment lines of {id}: {e}")))?,
                None => Vec::new(),
            };
            let due: String = r.get("amount_due");
            if settle(issued.invoice.total, &lines).0.to_string() != due {
                report.differences.push(Difference {
                    kind: DifferenceKind::AmountDue,
                    account: issued.account.clone(),
                    what: id.clone(),
                    detail: format!(
                        "stored {due}, total {} plus its adjustment lines make {}",
                        issued.invoice.total,
                        settle(issued.invoice.total, &lines).0
                    ),
                });
            }
            invoices.push((id, issued));
        }
        let mut adjustments = Vec::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_adjustment_rows.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            // Issued by the close of `closed_period`.
            let closing: String = r.get("closed_period");
            adjustments.push(Issued {
                account: r.get("account"),
                period: r.get("period"),
                known: known(&closing, r.get("issued_at_ms")),
                terms_rev: terms_rev(&closing),
                issued_ms: r.get("issued_at_ms"),
                invoice: parse_invoice(&r.get::<String, _>("body"))?,
            });
        }
        drop(conn);
        let wanted = |p: &str| period.is_none_or(|q| q == p);
        for (id, issued) in invoices.iter().filter(|(_, i)| wanted(&i.period)) {
            report.invoices += 1;
            let again = self
                .rate_as_issued(issued, false, &invoices, &adjustments)
                .await?;
            if let Some(detail) = compare(&issued.invoice, &again) {
                report.differences.push(Difference {
                    kind: DifferenceKind::Invoice,
                    account: issued.account.clone(),
                    what: id.clone(),
                    detail,
                });
            }
        }
        for a in adjustments.iter().filter(|a| wanted(&a.period)) {
            report.adjustments += 1;
            let again = self
                .rate_as_issued(a, true, &invoices, &adjustments)
                .await?;
            if let Some(detail) = compare(&a.invoice, &again) {
                report.differences.push(Difference {
                    kind: DifferenceKind::Adjustment,
                    account: a.account.clone(),
                    what: a.period.clone(),
                    detail,
                });
            }
        }
        Ok(report)
    }

    /// Every account's usage keys folded again from its usage facts, against the stored runs.
    async fn verify_ledgers(&self, report: &mut VerifyReport) -> Result<()> {
        for account in self.admin().known_accounts().await? {
            report.accounts += 1;
            let again = self.log().ledger_known_at(&account, Known::ALL).await?;
            let stored = self.log().account_ledger(&account).await?;
            let rebuilt: BTreeMap<_, _> = again.usage().collect();
            for (key, runs) in stored.usage() {
                report.usage_keys += 1;
                let name = format!(
                    "{}/{}/{}/{}",
                    key.lease,
                    key.resource,
                    key.sku,
                    key.class.as_str()
                );
                match rebuilt.get(key) {
                    Some(r) if *r == runs => {}
                    Some(r) => report.differences.push(Difference {
                        kind: DifferenceKind::Ledger,
                        account: account.clone(),
                        what: name,
                        detail: format!(
                            "stored runs {} differ from the events' {}",
                            runs_text(runs),
                            runs_text(r)
                        ),
                    }),
                    None => report.differences.push(Difference {
                        kind: DifferenceKind::Ledger,
                        account: account.clone(),
                        what: name,
                        detail: "stored, but no stored event tells it (usage facts missing)".into(),
                    }),
                }
            }
            for (key, _) in again.usage() {
                if stored
                    .runs(&key.lease, &key.resource, &key.sku, key.class)
                    .is_none()
                {
                    report.differences.push(Difference {
                        kind: DifferenceKind::Ledger,
                        account: account.clone(),
                        what: format!("{}/{}/{}", key.lease, key.resource, key.sku),
                        detail: "events tell this key, the ledger does not have it".into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// `issued`'s period rated again as its issue rated it: the period's price book version,
    /// the events ingested by then, the credit balance after what was issued by then (for an
    /// adjustment's recomputation, `earlier_only`: of the periods before its own).
    async fn rate_as_issued(
        &self,
        issued: &Issued,
        earlier_only: bool,
        invoices: &[(String, Issued)],
        adjustments: &[Issued],
    ) -> Result<Invoice, CloseError> {
        let t = issued.issued_ms;
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let closed = self.closed_periods_at(&mut conn, issued.terms_rev).await?;
        let c = closed
            .iter()
            .find(|c| c.period.label == issued.period)
            .ok_or_else(|| CloseError::NotClosed(issued.period.clone()))?;
        let platform =
            crate::ledger::rental::load_platform_known_at(&mut conn, issued.known).await?;
        drop(conn);
        // What every other period effectively said at `t`: its invoice issued by then, or
        // the latest adjustment issued by then (an adjustment's own period: only those
        // before it, as the close that issued it compared against them).
        let mut effective: BTreeMap<&str, (i64, &Invoice)> = BTreeMap::new();
        let sources = invoices
            .iter()
            .map(|(_, i)| i)
            .chain(adjustments.iter())
            .filter(|i| i.account == issued.account && i.period != issued.period);
        for i in sources.filter(|i| i.issued_ms <= t) {
            let slot = effective
                .entry(i.period.as_str())
                .or_insert((i.issued_ms, &i.invoice));
            if i.issued_ms >= slot.0 {
                *slot = (i.issued_ms, &i.invoice);
            }
        }
        let credits: Vec<IssuedCredit> = effective
            .iter()
            .filter(|(label, _)| {
                !earlier_only
                    || closed
                        .iter()
                        .any(|k| k.period.label == **label && k.period.start < c.period.start)
            })
            .map(|(label, (_, inv))| issued_credit(label, inv))
            .collect();
        let mut ledgers = std::collections::HashMap::new();
        for id in crate::pricing::payers::member_ids(&c.book, &issued.account) {
            let ledger = self.log().ledger_known_at(&id, issued.known).await?;
            ledgers.insert(id, ledger);
        }
        let rated = crate::finance::adjust::rate_domain(
            &c.book,
            &c.period.label,
            &platform,
            &issued.account,
            &ledgers,
            &credits,
        )?;
        match rated {
            billing_core::domain::DomainRated::Rated(r) => Ok(r.invoice),
            billing_core::domain::DomainRated::UnknownRegion(unpriced) => {
                Err(CloseError::Unpriced {
                    period: c.period.label.clone(),
                    unpriced,
                })
            }
        }
    }
}

fn runs_text(runs: &billing_core::ledger::Runs) -> String {
    serde_json::to_string(runs).unwrap_or_default()
}

/// None when equal; else what differs, totals first.
fn compare(stored: &Invoice, again: &Invoice) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(stored).ok()?,
        serde_json::to_value(again).ok()?,
    );
    if a == b {
        return None;
    }
    let money =
        |i: &Invoice| -> [Decimal; 5] { [i.subtotal, i.discount, i.credit, i.tax, i.total] };
    Some(if money(stored) != money(again) {
        format!(
            "stored subtotal/discount/credit/tax/total {:?}, recomputed {:?}",
            money(stored).map(|d| d.to_string()),
            money(again).map(|d| d.to_string())
        )
    } else {
        format!("the lines differ: stored {a}, recomputed {b}")
    })
}
