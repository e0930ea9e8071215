//! Issue 12, the accounting export: every finance document as double-entry journal lines.
//! Pure: the store passes the documents, this module says what they post. Every document's
//! debits equal its credits, to the cent (`balanced`).
//!
//! The chart of accounts:
//! - `accounts_receivable`: what customers owe (an invoice's total plus its adjustments);
//! - `revenue:<component>`: each line component's amounts (`revenue:on_demand`, ...);
//! - `deferred_revenue`: `package` and `subscription` lines, billed up front, until used:
//!   a package is recognized as its `package_usage` lines use it, a subscription cycle over
//!   its seconds (`recognition_entries`);
//! - `discounts` and `credits_applied`: contra-revenue, what discounts and credits took off;
//! - `tax_payable`;
//! - `wallet_liability`: prepaid money held for the customer (top-ups, credit notes) less
//!   refunds and settlements; `cash`: money in and out; `wallet_corrections`: the other side
//!   of a correction movement.

use crate::common::money::round_amount;
use crate::finance::adjustment::AdjustmentLine;
use crate::pricing::invoice::{Component, Invoice};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;

/// One journal line. Exactly one of `debit` and `credit` is non-zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The document posted: an invoice or credit note id, `payment:<id>`, `movement:<seq>`,
    /// `recognition:<period>:<term>`.
    pub document: String,
    /// The document's number or reference.
    pub reference: String,
    pub date: String,
    /// The customer account.
    pub customer: String,
    /// The ledger account (see the module docs).
    pub account: String,
    pub debit: Decimal,
    pub credit: Decimal,
    pub memo: String,
}

/// Who and what a document is, for its lines.
#[derive(Debug, Clone)]
pub struct Head<'a> {
    pub document: &'a str,
    pub reference: &'a str,
    pub date: &'a str,
    pub customer: &'a str,
}

fn post(head: &Head<'_>, account: &str, signed_debit: Decimal, memo: &str) -> Option<Entry> {
    if signed_debit.is_zero() {
        return None;
    }
    let zero = round_amount(Decimal::ZERO);
    let (debit, credit) = if signed_debit > Decimal::ZERO {
        (round_amount(signed_debit), zero)
    } else {
        (zero, round_amount(-signed_debit))
    };
    Some(Entry {
        document: head.document.to_string(),
        reference: head.reference.to_string(),
        date: head.date.to_string(),
        customer: head.customer.to_string(),
        account: account.to_string(),
        debit,
        credit,
        memo: memo.to_string(),
    })
}

/// The ledger account a line component's amounts are credited to.
fn revenue_account(component: &str) -> String {
    match component {
        "package" | "subscription" => "deferred_revenue".to_string(),
        other => format!("revenue:{other}"),
    }
}

/// An invoice: receivable for its total plus adjustments (a credit when they make it
/// negative: the credit note takes it from there), revenue per component, deferred revenue
/// for packages and subscriptions, discounts, credits and tax; then each adjustment line on
/// the account it corrects.
pub fn invoice_entries(
    head: &Head<'_>,
    invoice: &Invoice,
    adjustments: &[AdjustmentLine],
) -> Vec<Entry> {
    let mut out = Vec::new();
    let adjusted: Decimal = adjustments.iter().map(|a| a.amount).sum();
    out.extend(post(
        head,
        "accounts_receivable",
        invoice.total + adjusted,
        "invoice total and adjustments",
    ));
    let mut per_component: BTreeMap<&str, Decimal> = BTreeMap::new();
    for l in &invoice.lines {
        *per_component.entry(l.component.as_str()).or_default() += l.amount;
    }
    for (component, amount) in per_component {
        out.extend(post(head, &revenue_account(component), -amount, component));
    }
    out.extend(post(head, "discounts", invoice.discount, "discount"));
    out.extend(post(head, "credits_applied", invoice.credit, "credit"));
    out.extend(post(head, "tax_payable", -invoice.tax, "tax"));
    for a in adjustments {
        let memo = format!(
            "adjustment of {} ({})",
            a.invoice_number.as_deref().unwrap_or(&a.period),
            a.component
        );
        let (account, signed_debit) = match a.component.as_str() {
            // Signed as they move the total: a larger discount is a negative amount.
            "discount" => ("discounts".to_string(), -a.amount),
            "credit" => ("credits_applied".to_string(), -a.amount),
            "tax" => ("tax_payable".to_string(), -a.amount),
            other => (revenue_account(other), -a.amount),
        };
        out.extend(post(head, &account, signed_debit, &memo));
    }
    out
}

/// A credit note: what the new invoice could not absorb leaves receivable for the wallet.
pub fn credit_note_entries(head: &Head<'_>, amount: Decimal) -> Vec<Entry> {
    [
        post(head, "accounts_receivable", amount, "credit note"),
        post(
            head,
            "wallet_liability",
            -amount,
            "credit note credited to the wallet",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A payment of an invoice: from the wallet (`wallet`) or from outside (`external`).
pub fn payment_entries(head: &Head<'_>, method: &str, amount: Decimal) -> Vec<Entry> {
    let from = if method == "wallet" {
        "wallet_liability"
    } else {
        "cash"
    };
    [
        post(head, from, amount, &format!("payment ({method})")),
        post(head, "accounts_receivable", -amount, "payment"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A wallet movement the admin made: a top-up (cash in), a refund (cash out) or a
/// correction. Settlements and credit notes post with their documents.
pub fn movement_entries(head: &Head<'_>, kind: &str, amount: Decimal) -> Vec<Entry> {
    let other = if kind == "correction" {
        "wallet_corrections"
    } else {
        "cash"
    };
    [
        post(head, other, amount, kind),
        post(head, "wallet_liability", -amount, kind),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Deferred revenue recognized: `amount` of a package used or a subscription cycle elapsed.
pub fn recognition_entries(head: &Head<'_>, component: Component, amount: Decimal) -> Vec<Entry> {
    let memo = format!("{} recognized", component.as_str());
    [
        post(head, "deferred_revenue", amount, &memo),
        post(
            head,
            &format!("revenue:{}", component.as_str()),
            -amount,
            &memo,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A share of a prepaid `price` covering `total` units, `used` of them: rounded to the cent.
pub fn share(price: Decimal, used: Decimal, total: Decimal) -> Decimal {
    if total.is_zero() {
        return round_amount(Decimal::ZERO);
    }
    round_amount(price * used / total)
}

/// Revenue recognized in a period from a subscription billed up front: each cycle
/// `[bounds[k], bounds[k+1])` contributes its share of `price` by its seconds inside
/// `[period_start, period_end)`, each share rounded to the cent ([`share`]).
pub fn subscription_recognized(
    price: Decimal,
    bounds: &[i64],
    period_start: i64,
    period_end: i64,
) -> Decimal {
    bounds
        .windows(2)
        .map(|w| {
            let overlap = (w[1].min(period_end) - w[0].max(period_start)).max(0);
            share(price, Decimal::from(overlap), Decimal::from(w[1] - w[0]))
        })
        .sum()
}

/// Deferred revenue one term has recognized in a period: a package (by a `package_usage`
/// line of invoice `invoice`, an index into the invoices given) or a subscription
/// (`invoice` None: by its billed cycles' seconds in the period).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognized {
    pub invoice: Option<usize>,
    pub component: Component,
    pub account: String,
    /// The package's or subscription's id.
    pub id: String,
    pub amount: Decimal,
}

impl Recognized {
    /// Its journal document: `recognition:<period>:<package|subscription>:<account>:<id>`.
    pub fn document(&self, period_label: &str) -> String {
        let kind = match self.component {
            Component::Subscription => "subscription",
            _ => "package",
        };
        format!(
            "recognition:{period_label}:{kind}:{}:{}",
            self.account, self.id
        )
    }
}

/// What a closed period recognizes of deferred revenue, given its issued `invoices` (in
/// journal order) under `book`: per invoice, each `package_usage` line of a package the book
/// has for the invoice's account recognizes the package's [`share`] for the line's quantity;
/// then each subscription recognizes its billed cycles ([`started_bounds`]: none starting at
/// or after its `end`) by their seconds in `period` ([`subscription_recognized`]).
///
/// [`started_bounds`]: crate::pricing::subscriptions::started_bounds
pub fn recognitions(
    book: &crate::pricing::pricebook::PriceBook,
    period: &crate::pricing::period::Period,
    invoices: &[&Invoice],
) -> Vec<Recognized> {
    let mut out = Vec::new();
    for (n, inv) in invoices.iter().enumerate() {
        for l in &inv.lines {
            if l.component != Component::PackageUsage {
                continue;
            }
            let Some(p) = book
                .packages
                .iter()
                .find(|p| Some(&p.id) == l.package.as_ref() && p.account == inv.account)
            else {
                continue;
            };
            out.push(Recognized {
                invoice: Some(n),
                component: Component::Package,
                account: p.account.clone(),
                id: p.id.clone(),
                amount: share(p.price, l.quantity, p.unit_seconds),
            });
        }
    }
    for s in &book.subscriptions {
        let bounds = crate::pricing::subscriptions::started_bounds(s, book.timezone);
        out.push(Recognized {
            invoice: None,
            component: Component::Subscription,
            account: s.account.clone(),
            id: s.id.clone(),
            amount: subscription_recognized(s.price, &bounds, period.start, period.end),
        });
    }
    out
}

/// The journal as CSV (`GET /v1/admin/exports/journal?format=csv`): a header and one row per
/// entry, text fields quoted by [`crate::finance::export::csv_field`].
pub fn journal_csv(entries: &[Entry]) -> String {
    use crate::finance::export::csv_field as field;
    let mut body = String::from("document,reference,date,customer,account,debit,credit,memo\n");
    for e in entries {
        body.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            field(&e.document),
            field(&e.reference),
            field(&e.date),
            field(&e.customer),
            field(&e.account),
            e.debit,
            e.credit,
            field(&e.memo)
        ));
    }
    body
}

/// Whether every document's debits equal its credits (and each line is one-sided).
pub fn balanced(entries: &[Entry]) -> bool {
    let mut net: BTreeMap<&str, Decimal> = BTreeMap::new();
    for e in entries {
        if e.debit.is_sign_negative()
            || e.credit.is_sign_negative()
            || (!e.debit.is_zero() && !e.credit.is_zero())
        {
            return false;
        }
        *net.entry(e.document.as_str()).or_default() += e.debit - e.credit;
    }
    net.values().all(Decimal::is_zero)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::invoice::{Line, Terms};
    use crate::pricing::period::PeriodJson;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn head<'a>() -> Head<'a> {
        Head {
            document: "inv_1",
            reference: "INV-2026-000001",
            date: "2026-12-02",
            customer: "acme",
        }
    }

    #[test]
    fn a_subscription_cycle_is_recognized_by_its_seconds_in_the_period() {
        // A 30-day cycle of 3000.00 from day 20 of a 30-day period: 10 days in it, 1000.00;
        // the next period takes the other 20 days, 2000.00.
        let day = 86_400;
        let bounds = [20 * day, 50 * day];
        assert_eq!(
            subscription_recognized(d("3000.00"), &bounds, 0, 30 * day),
            d("1000.00")
        );
        assert_eq!(
            subscription_recognized(d("3000.00"), &bounds, 30 * day, 60 * day),
            d("2000.00")
        );
        // A third of 100.00 rounds to 33.33 per cycle part.
        assert_eq!(
            subscription_recognized(d("100.00"), &[0, 3], 0, 1),
            d("33.33")
        );
    }

    #[test]
    fn an_ended_subscription_recognizes_only_its_billed_cycles() {
        // A monthly subscription of 300.00 from 2026-10-01 for 3 cycles, ended on
        // 2026-11-15: cycles start on Oct 1 and Nov 1 (billed); Dec 1 is at or after the end
        // and never billed. November recognizes its whole cycle (300.00), December nothing
        // (it recognized 300.00 before the fix: the unbilled cycle).
        let book = crate::pricing::pricebook::PriceBook::from_toml(
            r#"
currency = "CNY"
[skus.gpu]
rate_per_hour = "10.00"
[[subscriptions]]
account = "acme"
id = "monthly"
sku = "gpu"
quantity = "1"
cycle = "month"
cycles = 3
start = "2026-10-01T00:00:00Z"
end = "2026-11-15T00:00:00Z"
price = "300.00"
"#,
        )
        .unwrap();
        let month = |m: &str| crate::pricing::period::Period::month(m, chrono_tz::Tz::UTC).unwrap();
        let nov = recognitions(&book, &month("2026-11"), &[]);
        assert_eq!(nov.len(), 1);
        assert_eq!(nov[0].amount, d("300.00"));
        assert_eq!(
            nov[0].document("2026-11"),
            "recognition:2026-11:subscription:acme:monthly"
        );
        assert_eq!(
            recognitions(&book, &month("2026-12"), &[])[0].amount,
            d("0.00")
        );
    }

    #[test]
    fn a_package_usage_line_recognizes_its_share_of_the_package() {
        // A package of 100 GPU-hours (360000 unit-seconds) for 720.00: a line using 36000
        // unit-seconds (10 hours) recognizes 72.00; another account's line recognizes nothing.
        let book = crate::pricing::pricebook::PriceBook::from_toml(
            r#"
currency = "CNY"
[skus.gpu]
rate_per_hour = "10.00"
[[packages]]
account = "acme"
id = "p100"
sku = "gpu"
hours = "100"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "720.00"
"#,
        )
        .unwrap();
        let mut line = Line::usage(Component::PackageUsage, "gpu", 0, d("36000"), d("0.00"));
        line.package = Some("p100".into());
        let inv = |account: &str| {
            Invoice::assemble(
                account,
                "CNY",
                PeriodJson {
                    start: "s".into(),
                    end: "e".into(),
                },
                vec![line.clone()],
                Terms {
                    discount_percent: d("0"),
                    credit_balance: d("0"),
                    tax_rate: d("0"),
                },
            )
        };
        let (acme, other) = (inv("acme"), inv("other"));
        let nov = crate::pricing::period::Period::month("2026-11", chrono_tz::Tz::UTC).unwrap();
        let r = recognitions(&book, &nov, &[&other, &acme]);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].invoice, r[0].amount), (Some(1), d("72.00")));
        assert_eq!(
            r[0].document("2026-11"),
            "recognition:2026-11:package:acme:p100"
        );
    }

    #[test]
    fn the_journal_csv_quotes_text_and_keeps_amounts_plain() {
        let e = Entry {
            document: "inv_1".into(),
            reference: "INV-2026-000001".into(),
            date: "2026-12-02".into(),
            customer: "acme, inc".into(),
            account: "revenue:on_demand".into(),
            debit: d("0.00"),
            credit: d("16.80"),
            memo: "on_demand".into(),
        };
        let csv = journal_csv(&[e]);
        let mut rows = csv.lines();
        assert_eq!(
            rows.next(),
            Some("document,reference,date,customer,account,debit,credit,memo")
        );
        assert_eq!(
            rows.next(),
            Some(
                "inv_1,INV-2026-000001,2026-12-02,\"acme, inc\",revenue:on_demand,0.00,16.80,on_demand"
            )
        );
    }

    #[test]
    fn an_invoice_posts_balanced_with_revenue_per_component_and_deferred_packages() {
        // on_demand 100.00, package 50.00, egress 10.00: subtotal 160.00, 10% discount
        // 16.00, credit 4.00, net 140.00, tax 6% 8.40, total 148.40.
        let lines = vec![
            Line::usage(Component::OnDemand, "gpu", 0, d("3600"), d("100.00")),
            Line::usage(Component::Package, "gpu", 0, d("1"), d("50.00")),
            Line::usage(Component::Egress, "x", 0, d("1"), d("10.00")),
        ];
        let inv = Invoice::assemble(
            "acme",
            "CNY",
            PeriodJson {
                start: "s".into(),
                end: "e".into(),
            },
            lines,
            Terms {
                discount_percent: d("10"),
                credit_balance: d("4.00"),
                tax_rate: d("0.06"),
            },
        );
        assert_eq!(inv.total, d("148.40"));
        let e = invoice_entries(&head(), &inv, &[]);
        assert!(balanced(&e), "{e:#?}");
        let on = |acct: &str| -> (String, String) {
            let x = e.iter().find(|x| x.account == acct).unwrap();
            (x.debit.to_string(), x.credit.to_string())
        };
        assert_eq!(on("accounts_receivable"), ("148.40".into(), "0.00".into()));
        assert_eq!(on("revenue:on_demand"), ("0.00".into(), "100.00".into()));
        assert_eq!(on("deferred_revenue"), ("0.00".into(), "50.00".into()));
        assert_eq!(on("discounts"), ("16.00".into(), "0.00".into()));
        assert_eq!(on("credits_applied"), ("4.00".into(), "0.00".into()));
        assert_eq!(on("tax_payable"), ("0.00".into(), "8.40".into()));
    }

    #[test]
    fn adjustments_and_a_credit_note_keep_every_document_balanced() {
        // A new invoice of 10.60 carrying -2,400.00 on_demand and -144.00 tax of an earlier
        // one: receivable -2,533.40 (a credit), which the credit note moves to the wallet.
        let inv = Invoice::assemble(
            "acme",
            "CNY",
            PeriodJson {
                start: "s".into(),
                end: "e".into(),
            },
            vec![Line::usage(
                Component::OnDemand,
                "gpu",
                0,
                d("3600"),
                d("10.00"),
            )],
            Terms {
                tax_rate: d("0.06"),
                ..Terms::default()
            },
        );
        let adj = |component: &str, amount: &str| AdjustmentLine {
            period: "2026-11".into(),
            invoice_id: Some("inv_0".into()),
            invoice_number: Some("INV-2026-000001".into()),
            component: component.into(),
            amount: d(amount),
        };
        let mut e = invoice_entries(
            &head(),
            &inv,
            &[adj("on_demand", "-2400.00"), adj("tax", "-144.00")],
        );
        let receivable = e
            .iter()
            .find(|x| x.account == "accounts_receivable")
            .unwrap();
        assert_eq!(receivable.credit, d("2533.40"));
        let note = Head {
            document: "cn_1",
            reference: "CN-2027-000001",
            ..head()
        };
        e.extend(credit_note_entries(&note, d("2533.40")));
        e.extend(payment_entries(
            &Head {
                document: "payment:1",
                ..head()
            },
            "wallet",
            d("5.00"),
        ));
        e.extend(movement_entries(
            &Head {
                document: "movement:1",
                ..head()
            },
            "refund",
            d("-20.00"),
        ));
        e.extend(recognition_entries(
            &Head {
                document: "recognition:1",
                ..head()
            },
            Component::Package,
            share(d("1500.00"), d("36000"), d("360000")),
        ));
        assert!(balanced(&e), "{e:#?}");
        let net = |acct: &str| -> Decimal {
            e.iter()
                .filter(|x| x.account == acct)
                .map(|x| x.debit - x.credit)
                .sum()
        };
        // Receivable: -2,533.40 + 2,533.40 - 5.00.
        assert_eq!(net("accounts_receivable"), d("-5.00"));
        // Wallet: credited 2,533.40, paid 5.00 out, refunded 20.00.
        assert_eq!(net("wallet_liability"), d("-2508.40"));
        assert_eq!(net("revenue:package"), d("-150.00"));
    }

    #[test]
    fn an_unbalanced_or_two_sided_line_is_caught() {
        let mut e = payment_entries(&head(), "external", d("1.00"));
        assert!(balanced(&e));
        e[0].debit = d("1.01");
        assert!(!balanced(&e));
        e[0].credit = d("0.01");
        assert!(!balanced(&e));
    }
}
