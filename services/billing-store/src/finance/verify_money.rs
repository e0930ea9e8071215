//! `gpubill verify`'s money checks (issue 24.3): every stored figure a later figure is
//! computed from, against what it must be:
//!
//! - **invoice fields**: the `credit` and `total` columns (the next periods' credit pool and
//!   the exports read them) against the invoice body (which `verify` rates again), an
//!   adjustment's `credit` against its body; the `status` column against its payments
//!   (`paid` once they cover `amount_due`, else `issued`); payments never above `amount_due`;
//! - **numbering**: every invoice and credit note number is `{prefix}-{year}-{nnnnnn}`, each
//!   series holds exactly the numbers `1..=last` its row says were issued (a deleted or
//!   renumbered document leaves a gap), in issue order;
//! - **wallets**: every account's `balance` against the sum of its movements, its
//!   `outstanding` against what its invoices still owe (amount due less payments); the
//!   payments from the wallet of each invoice against its `settlement` movements; each credit
//!   note against its `credit_note` movement; no payment or movement of a missing document.
//!
//! Each finding names the document or wallet, the field, what is stored and what it must be.

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::conn::store::Store;
use crate::finance::verify::{Difference, DifferenceKind, VerifyReport};
use crate::finance::wallet_rows::{MovementKind, PaymentMethod};
use billing_core::invoice::InvoiceStatus;
use billing_core::numbering;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};

/// Stored money: one that does not parse is an error naming `table.column` and the value.
fn dec(s: &str, (table, column): (&str, &str)) -> Result<Decimal> {
    crate::conn::error::stored(s.parse().ok(), table, column, s)
}

fn diff(kind: DifferenceKind, account: &str, what: &str, detail: String) -> Difference {
    Difference {
        kind,
        account: account.into(),
        what: what.into(),
        detail,
    }
}

/// A stored invoice's money fields.
struct StoredInvoice {
    id: String,
    account: String,
    number: String,
    status: InvoiceStatus,
    credit: String,
    total: String,
    body: serde_json::Value,
    amount_due: Decimal,
    issued_ms: i64,
}

/// An issued document as numbering sees it: id, account, number, issue time.
type Numbered = (String, String, String, i64);

/// Each number series' last number: (prefix, year) → last.
type Series = BTreeMap<(String, i64), i64>;

/// A wallet movement: kind, signed amount, reference, document.
type StoredMovement = (MovementKind, Decimal, String, Option<String>);

/// A series' documents: (issue time, number in the series, the document).
type SeriesDocs<'a> = Vec<(i64, i64, &'a Numbered)>;

/// Everything the money checks read, loaded once.
#[derive(Default)]
struct Money {
    invoices: Vec<StoredInvoice>,
    notes: Vec<(String, String, String, Decimal, i64)>,
    /// invoice id -> (method, amount, reference)
    payments: BTreeMap<String, Vec<(PaymentMethod, Decimal, String)>>,
    /// account -> (kind, amount, reference, document)
    movements: BTreeMap<String, Vec<StoredMovement>>,
    wallets: BTreeMap<String, (Decimal, Decimal)>,
    series: Series,
    /// Documents moves carried (issue 29): number → whether it is here now.
    moved: BTreeMap<String, bool>,
}

impl FinanceHandle<'_> {
    async fn load_money(&self) -> Result<Money> {
        let mut conn = self.pool.acquire().await?;
        let mut m = Money::default();
        let q = |sql| crate::conn::db::query(sql);
        for r in q(include_str!(
            "../../queries/shared/select_invoice_money_rows.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            let id: String = r.get("id");
            let body = serde_json::from_str(&r.get::<String, _>("body"))
                .map_err(|e| StoreError::Corrupt(format!("invoice {id} body: {e}")))?;
            m.invoices.push(StoredInvoice {
                account: r.get("account"),
                number: r.get("number"),
                status: {
                    let status: String = r.get("status");
                    crate::conn::error::stored(
                        InvoiceStatus::parse(&status),
                        "invoices",
                        "status",
                        &status,
                    )?
                },
                credit: r.get("credit"),
                total: r.get("total"),
                body,
                amount_due: dec(
                    &r.get::<String, _>("amount_due"),
                    ("invoices", "amount_due"),
                )?,
                issued_ms: r.get("issued_at_ms"),
                id,
            });
        }
        for r in q(include_str!(
            "../../queries/shared/select_credit_note_rows.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            let amount = dec(&r.get::<String, _>("amount"), ("credit_notes", "amount"))?;
            m.notes.push((
                r.get("id"),
                r.get("account"),
                r.get("number"),
                amount,
                r.get("issued_at_ms"),
            ));
        }
        for r in q(include_str!("../../queries/shared/select_all_payments.sql"))
            .fetch_all(&mut *conn)
            .await?
        {
            let amount = dec(
                &r.get::<String, _>("amount"),
                ("invoice_payments", "amount"),
            )?;
            let method: String = r.get("method");
            let method = crate::conn::error::stored(
                PaymentMethod::parse(&method),
                "invoice_payments",
                "method",
                &method,
            )?;
            m.payments.entry(r.get("invoice_id")).or_default().push((
                method,
                amount,
                r.get("reference"),
            ));
        }
        for r in q(include_str!(
            "../../queries/shared/select_all_wallet_movements.sql"
        ))
        .fetch_all(&mut *conn)
        .await?
        {
            let amount = dec(
                &r.get::<String, _>("amount"),
                ("wallet_movements", "amount"),
            )?;
            let kind: String = r.get("kind");
            let kind = crate::conn::error::stored(
                MovementKind::parse(&kind),
                "wallet_movements",
                "kind",
                &kind,
            )?;
            m.movements.entry(r.get("account")).or_default().push((
                kind,
                amount,
                r.get("reference"),
                r.get("document_id"),
            ));
        }
        for r in q(include_str!("../../queries/shared/select_all_wallets.sql"))
            .fetch_all(&mut *conn)
            .await?
        {
            let balance = dec(&r.get::<String, _>("balance"), ("wallets", "balance"))?;
            let outstanding = dec(
                &r.get::<String, _>("outstanding"),
                ("wallets", "outstanding"),
            )?;
            m.wallets.insert(r.get("account"), (balance, outstanding));
        }
        (m.series, m.moved) = numbering_state(&mut *conn).await?;
        Ok(m)
    }

    /// Each adjustment's `credit` column against its body (the credit pool reads the column).
    async fn adjustment_credits(&self, out: &mut Vec<Difference>) -> Result<()> {
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_adjustment_credits.sql"
        ))
        .fetch_all(&self.pool)
        .await?
        {
            let (account, period, closing): (String, String, String) =
                (r.get("account"), r.get("period"), r.get("closed_period"));
            let body: serde_json::Value = serde_json::from_str(&r.get::<String, _>("body"))
                .map_err(|e| StoreError::Corrupt(format!("adjustment body: {e}")))?;
            let stored: String = r.get("credit");
            if body["credit"].as_str() != Some(stored.as_str()) {
                out.push(diff(
                    DifferenceKind::AdjustmentField,
                    &account,
                    &format!("{period} (closed with {closing})"),
                    format!("credit: stored {stored}, its body says {}", body["credit"]),
                ));
            }
        }
        Ok(())
    }
}

/// Every number series' last number, and the documents moves of trees carried (issue 29):
/// number → whether it is here now.
async fn numbering_state(
    conn: &mut dyn crate::conn::db::Conn,
) -> Result<(Series, BTreeMap<String, bool>)> {
    let q = |sql| crate::conn::db::query(sql);
    let (mut series, mut moved) = (Series::new(), BTreeMap::new());
    for r in q(include_str!(
        "../../queries/shared/select_number_series.sql"
    ))
    .fetch_all(&mut *conn)
    .await?
    {
        series.insert((r.get("series"), r.get("year")), r.get("last"));
    }
    for r in q(include_str!(
        "../../queries/shared/select_moved_documents.sql"
    ))
    .fetch_all(&mut *conn)
    .await?
    {
        moved.insert(r.get("number"), r.get::<i64, _>("here") == 1);
    }
    Ok((series, moved))
}

/// What the payments of invoice `id` add up to.
fn paid_of(m: &Money, id: &str) -> Decimal {
    m.payments
        .get(id)
        .map(|p| p.iter().map(|(_, a, _)| *a).sum())
        .unwrap_or_default()
}

/// Each invoice's `credit`, `total` and `status` columns; payments not above `amount_due`.
fn invoice_fields(m: &Money, out: &mut Vec<Difference>) {
    for i in &m.invoices {
        for (field, stored) in [("credit", &i.credit), ("total", &i.total)] {
            if i.body[field].as_str() != Some(stored.as_str()) {
                out.push(diff(
                    DifferenceKind::InvoiceField,
                    &i.account,
                    &i.id,
                    format!(
                        "{field}: stored {stored}, the invoice says {}",
                        i.body[field]
                    ),
                ));
            }
        }
        let paid = paid_of(m, &i.id);
        // The stored status the payments imply (`billing_core::invoice::status`).
        let status = billing_core::invoice::status(i.amount_due, paid).as_str();
        if i.status.as_str() != status {
            out.push(diff(
                DifferenceKind::InvoiceField,
                &i.account,
                &i.id,
                format!(
                    "status: stored {:?}, expected {status:?} (paid {paid} of amount_due {})",
                    i.status.as_str(),
                    i.amount_due
                ),
            ));
        }
        if paid > i.amount_due {
            out.push(diff(
                DifferenceKind::Payments,
                &i.account,
                &i.id,
                format!(
                    "paid: payments add up to {paid}, more than amount_due {}",
                    i.amount_due
                ),
            ));
        }
    }
    let known: BTreeSet<&str> = m.invoices.iter().map(|i| i.id.as_str()).collect();
    for (id, p) in &m.payments {
        if !known.contains(id.as_str()) {
            out.push(diff(
                DifferenceKind::Payments,
                "",
                id,
                format!("{} payment(s) of an invoice that is not stored", p.len()),
            ));
        }
    }
}

/// Every series holds exactly `1..=last`, numbered in issue order.
/// A shard's series (issue 29) miss the documents moved out of it, and documents moved in
/// from another shard's series are that series': `moved` (number → here now) says which.
fn numbering_gaps(
    docs: &[Numbered],
    (series, moved): (&Series, &BTreeMap<String, bool>),
    out: &mut Vec<Difference>,
) {
    let mut by_series: BTreeMap<(String, i64), SeriesDocs> = BTreeMap::new();
    for d in docs {
        match numbering::parse(&d.2) {
            Some((prefix, year, _))
                if moved.get(&d.2) == Some(&true)
                    && !series.contains_key(&(prefix.to_string(), i64::from(year))) => {}
            Some((prefix, year, seq)) => by_series
                .entry((prefix.to_string(), i64::from(year)))
                .or_default()
                .push((d.3, seq, d)),
            None => out.push(diff(
                DifferenceKind::Numbering,
                &d.1,
                &d.0,
                format!("number: stored {:?}, not PREFIX-YEAR-NNNNNN", d.2),
            )),
        }
    }
    let keys: BTreeSet<&(String, i64)> = by_series.keys().chain(series.keys()).collect();
    for key in keys {
        let docs = by_series.get(key).map(Vec::as_slice).unwrap_or_default();
        let last = series.get(key).copied();
        let seqs: Vec<i64> = docs.iter().map(|(_, s, _)| *s).collect();
        let (missing, beyond) = numbering::series_gaps(last, &seqs);
        let name = |n: i64| numbering::number(&key.0, key.1 as i32, n);
        for n in missing
            .into_iter()
            .filter(|n| moved.get(&name(*n)) != Some(&false))
        {
            out.push(diff(
                DifferenceKind::Numbering,
                "",
                &name(n),
                format!(
                    "number: series {}-{} issued up to {}, no stored document has this number (a gap)",
                    key.0,
                    key.1,
                    last.unwrap_or(0)
                ),
            ));
        }
        for n in beyond {
            let d = docs.iter().find(|(_, s, _)| *s == n).map(|(_, _, d)| *d);
            out.push(diff(
                DifferenceKind::Numbering,
                d.map_or("", |d| d.1.as_str()),
                d.map_or("", |d| d.0.as_str()),
                format!(
                    "number: stored {}, beyond the {} numbers series {}-{} issued",
                    name(n),
                    last.unwrap_or(0),
                    key.0,
                    key.1
                ),
            ));
        }
        let mut ordered: Vec<&(i64, i64, &Numbered)> = docs.iter().collect();
        ordered.sort_by_key(|(at, seq, _)| (*at, *seq));
        for w in ordered.windows(2) {
            if w[0].1 > w[1].1 {
                out.push(diff(
                    DifferenceKind::Numbering,
                    &w[1].2.1,
                    &w[1].2.0,
                    format!(
                        "number: stored {}, lower than {} issued before it",
                        w[1].2.2, w[0].2.2
                    ),
                ));
            }
        }
    }
}

/// Every wallet's balance and outstanding; wallet payments against settlement movements;
/// credit notes against their movements.
fn wallets(m: &Money, out: &mut Vec<Difference>) {
    let mut accounts: BTreeSet<&str> = m.wallets.keys().map(String::as_str).collect();
    accounts.extend(m.movements.keys().map(String::as_str));
    accounts.extend(m.invoices.iter().map(|i| i.account.as_str()));
    for account in accounts {
        let movements = m
            .movements
            .get(account)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let balance: Decimal = movements.iter().map(|(_, a, _, _)| *a).sum();
        let owed: Decimal = m
            .invoices
            .iter()
            .filter(|i| i.account == account)
            .map(|i| billing_core::settlement::owed(i.amount_due, paid_of(m, &i.id)))
            .sum();
        let (stored_balance, stored_outstanding) = m
            .wallets
            .get(account)
            .copied()
            .unwrap_or((Decimal::ZERO, Decimal::ZERO));
        if stored_balance != balance {
            out.push(diff(
                DifferenceKind::Wallet,
                account,
                "balance",
                format!("balance: stored {stored_balance}, its movements add up to {balance}"),
            ));
        }
        if stored_outstanding != owed {
            out.push(diff(
                DifferenceKind::Wallet,
                account,
                "outstanding",
                format!(
                    "outstanding: stored {stored_outstanding}, its invoices still owe {owed} (amount due less payments)"
                ),
            ));
        }
    }
    settlements_match_payments(m, out);
    credit_notes_match_movements(m, out);
}

/// Per invoice, what the wallet paid (payments `wallet`) equals its `settlement` movements.
fn settlements_match_payments(m: &Money, out: &mut Vec<Difference>) {
    let mut settled: BTreeMap<&str, (&str, Decimal)> = BTreeMap::new();
    for (account, movements) in &m.movements {
        for (kind, amount, reference, document) in movements {
            if *kind != MovementKind::Settlement {
                continue;
            }
            match document {
                Some(d) => {
                    settled
                        .entry(d.as_str())
                        .or_insert((account, Decimal::ZERO))
                        .1 -= *amount
                }
                None => out.push(diff(
                    DifferenceKind::Wallet,
                    account,
                    reference,
                    "a settlement movement without its invoice".into(),
                )),
            }
        }
    }
    let mut ids: BTreeSet<&str> = settled.keys().copied().collect();
    ids.extend(m.payments.keys().map(String::as_str));
    for id in ids {
        let from_wallet: Decimal = m
            .payments
            .get(id)
            .map(|p| {
                p.iter()
                    .filter(|(k, _, _)| *k == PaymentMethod::Wallet)
                    .map(|(_, a, _)| *a)
                    .sum()
            })
            .unwrap_or_default();
        let (account, moved) = settled.get(id).copied().unwrap_or(("", Decimal::ZERO));
        if from_wallet != moved {
            let account = m
                .invoices
                .iter()
                .find(|i| i.id == id)
                .map_or(account, |i| i.account.as_str());
            out.push(diff(
                DifferenceKind::Payments,
                account,
                id,
                format!(
                    "paid from the wallet: payments add up to {from_wallet}, the wallet's settlement movements to {moved}"
                ),
            ));
        }
    }
}

/// Each credit note was credited to its account's wallet: one `credit_note` movement of its
/// amount; no such movement without its credit note.
fn credit_notes_match_movements(m: &Money, out: &mut Vec<Difference>) {
    let mut credited: BTreeMap<&str, (&str, Decimal)> = BTreeMap::new();
    for (account, movements) in &m.movements {
        for (kind, amount, _, document) in movements {
            if *kind == MovementKind::CreditNote {
                let d = document.as_deref().unwrap_or("");
                credited.entry(d).or_insert((account, Decimal::ZERO)).1 += *amount;
            }
        }
    }
    for (id, account, _, amount, _) in &m.notes {
        let got = credited
            .remove(id.as_str())
            .map(|(_, a)| a)
            .unwrap_or_default();
        if got != *amount {
            out.push(diff(
                DifferenceKind::Wallet,
                account,
                id,
                format!("credit note: amount {amount}, its credit_note movements add up to {got}"),
            ));
        }
    }
    for (id, (account, amount)) in credited {
        out.push(diff(
            DifferenceKind::Wallet,
            account,
            id,
            format!("a credit_note movement of {amount} without its credit note"),
        ));
    }
}

impl Store {
    /// See the module docs: appends the findings to `report`.
    pub(crate) async fn verify_money(&self, report: &mut VerifyReport) -> Result<()> {
        let m = self.finance().load_money().await?;
        let out = &mut report.differences;
        invoice_fields(&m, out);
        self.finance().adjustment_credits(out).await?;
        let mut numbered: Vec<Numbered> = m
            .invoices
            .iter()
            .map(|i| {
                (
                    i.id.clone(),
                    i.account.clone(),
                    i.number.clone(),
                    i.issued_ms,
                )
            })
            .collect();
        numbered.extend(m.notes.iter().map(|(id, account, number, _, at)| {
            (id.clone(), account.clone(), number.clone(), *at)
        }));
        numbering_gaps(&numbered, (&m.series, &m.moved), out);
        wallets(&m, out);
        report.wallets = m.wallets.len();
        Ok(())
    }
}
