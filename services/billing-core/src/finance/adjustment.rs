//! Section 7 (after an invoice is issued) and issue 12's settlement: pure functions over
//! invoices. The store recomputes a closed period's invoice as if its late usage had been on
//! time; these functions say what the next invoice carries for the difference, what it then
//! owes, what is left for a credit note, and what state a document is in.
//!
//! An issued invoice never changes. What a period's invoice *effectively* says is the latest
//! of: the invoice issued at its close, or the recomputation that the latest adjustment was
//! issued against. Each close compares a fresh recomputation with that effective invoice, so
//! a difference is adjusted once, and a later difference (more late usage) only by what it
//! adds.

use crate::common::money::round_amount;
use crate::pricing::invoice::{Invoice, InvoiceStatus};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Days after issue an unpaid invoice becomes `overdue` unless configured.
pub const DEFAULT_PAYMENT_DAYS: i64 = 30;

/// One adjustment line on a new invoice: the signed difference of one component of an
/// earlier period's invoice. `component` is a line component (`on_demand`, `egress`,
/// `state:stopped`, ...) or one of the totals `discount`, `credit`, `tax`, signed as they move
/// what is owed (a larger discount is negative). The lines of one original add up to the
/// recomputed total less the effective one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdjustmentLine {
    /// The original invoice's period label (`YYYY-MM`).
    pub period: String,
    /// The original invoice; `None` when the account had no invoice for the period (it was
    /// unknown when the period closed: everything it owes for it is adjustment).
    pub invoice_id: Option<String>,
    pub invoice_number: Option<String>,
    pub component: String,
    pub amount: Decimal,
}

/// What an invoice says per component, signed as it moves the total: every line component's
/// amounts summed, then `discount` and `credit` negated and `tax`. Sums to the total.
pub fn component_amounts(inv: &Invoice) -> BTreeMap<String, Decimal> {
    let mut out: BTreeMap<String, Decimal> = BTreeMap::new();
    for l in &inv.lines {
        *out.entry(l.component.as_str().to_string()).or_default() += l.amount;
    }
    out.insert("discount".into(), -inv.discount);
    out.insert("credit".into(), -inv.credit);
    out.insert("tax".into(), inv.tax);
    out
}

/// The signed differences per component of `recomputed` against `effective` (`None`: no
/// invoice was issued), zero ones left out, in component order. They add up to
/// `recomputed.total - effective.total`.
pub fn differences(effective: Option<&Invoice>, recomputed: &Invoice) -> Vec<(String, Decimal)> {
    let before = effective.map(component_amounts).unwrap_or_default();
    let after = component_amounts(recomputed);
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let d = after.get(name).copied().unwrap_or_default()
                - before.get(name).copied().unwrap_or_default();
            (!d.is_zero()).then(|| (name.clone(), round_amount(d)))
        })
        .collect()
}

/// Whether a recomputation must be recorded against the effective invoice: it differs in
/// anything (a line's quantity, an SLA compensation, a total), not only in money. A period
/// with no invoice issued needs one only when the recomputation bills or credits anything.
pub fn needs_adjustment(effective: Option<&Invoice>, recomputed: &Invoice) -> bool {
    match effective {
        Some(e) => !same_content(e, recomputed),
        None => !recomputed.lines.is_empty() || !recomputed.total.is_zero(),
    }
}

/// Invoices compared by what they say (their JSON), not by bookkeeping fields.
fn same_content(a: &Invoice, b: &Invoice) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// What a new invoice owes once its adjustments are applied, and what is left over for a
/// credit note: `total + adjustments` when that is not negative (no credit note), else 0 owed
/// and the negative rest as a credit note's (positive) amount.
pub fn settle(total: Decimal, adjustments: &[AdjustmentLine]) -> (Decimal, Decimal) {
    let net = round_amount(total + adjustments.iter().map(|a| a.amount).sum::<Decimal>());
    if net.is_sign_negative() && !net.is_zero() {
        (round_amount(Decimal::ZERO), -net)
    } else {
        (net, round_amount(Decimal::ZERO))
    }
}

/// An original invoice a credit note credits: its period, the invoice (`None` when the
/// account had none for the period) and the net of its adjustment lines (negative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditedOriginal {
    pub period: String,
    pub invoice_id: Option<String>,
    pub invoice_number: Option<String>,
    pub amount: Decimal,
}

/// Which originals a credit note credits: the adjustment lines netted per period, and those
/// that net below zero, with that net, in period order (the first line of a period names its
/// invoice).
pub fn credited_originals(lines: &[AdjustmentLine]) -> Vec<CreditedOriginal> {
    let mut net: BTreeMap<&str, CreditedOriginal> = BTreeMap::new();
    for l in lines {
        net.entry(l.period.as_str())
            .or_insert_with(|| CreditedOriginal {
                period: l.period.clone(),
                invoice_id: l.invoice_id.clone(),
                invoice_number: l.invoice_number.clone(),
                amount: Decimal::ZERO,
            })
            .amount += l.amount;
    }
    net.into_values()
        .filter(|r| r.amount < Decimal::ZERO)
        .collect()
}

/// An invoice's state (issue 12): `paid` once its payments cover what it owes (an invoice
/// owing 0.00 is paid at issue; [`crate::pricing::invoice::status`]), `overdue` when not paid
/// `due_days` days after issue, else `issued`. The caller passes the clock's reading.
pub fn status(
    amount_due: Decimal,
    paid: Decimal,
    issued_ms: i64,
    now_ms: i64,
    due_days: i64,
) -> InvoiceStatus {
    let stored = crate::pricing::invoice::status(amount_due, paid);
    if stored == InvoiceStatus::Issued
        && now_ms >= issued_ms.saturating_add(due_days.saturating_mul(86_400_000))
    {
        InvoiceStatus::Overdue
    } else {
        stored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::invoice::{Component, Line, Terms};
    use crate::pricing::period::PeriodJson;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn invoice(lines: &[(Component, &str)], credit_balance: &str) -> Invoice {
        let lines = lines
            .iter()
            .map(|(c, amount)| Line::usage(*c, "gpu", 0, d("3600"), d(amount)))
            .collect();
        Invoice::assemble(
            "acme",
            "CNY",
            PeriodJson {
                start: "s".into(),
                end: "e".into(),
            },
            lines,
            Terms {
                discount_percent: d("10"),
                credit_balance: d(credit_balance),
                tax_rate: d("0.06"),
            },
        )
    }

    fn adj(amount: &str) -> AdjustmentLine {
        AdjustmentLine {
            period: "2026-11".into(),
            invoice_id: None,
            invoice_number: None,
            component: "on_demand".into(),
            amount: d(amount),
        }
    }

    #[test]
    fn differences_per_component_add_up_to_the_totals_difference() {
        // Issued: on_demand 100.00, 10% discount 10.00, no credit, tax 6% of 90 = 5.40, total
        // 95.40. Late usage adds 50.00 of on_demand and 20.00 of egress: subtotal 170.00,
        // discount 17.00, tax 9.18, total 162.18. Difference 66.78 =
        // 50.00 + 20.00 - 7.00 + 3.78.
        let issued = invoice(&[(Component::OnDemand, "100.00")], "0");
        let late = invoice(
            &[
                (Component::OnDemand, "150.00"),
                (Component::Egress, "20.00"),
            ],
            "0",
        );
        let diff = differences(Some(&issued), &late);
        let shown: Vec<(String, String)> = diff
            .iter()
            .map(|(c, a)| (c.clone(), a.to_string()))
            .collect();
        assert_eq!(
            shown,
            [
                ("discount".to_string(), "-7.00".to_string()),
                ("egress".to_string(), "20.00".to_string()),
                ("on_demand".to_string(), "50.00".to_string()),
                ("tax".to_string(), "3.78".to_string()),
            ]
        );
        let sum: Decimal = diff.iter().map(|(_, a)| *a).sum();
        assert_eq!(sum, late.total - issued.total);
        assert_eq!(sum, d("66.78"));
    }

    #[test]
    fn the_issue_example_credit_absorbs_the_late_usage() {
        // Credits 500, issued subtotal 100 (no discount here: 0%), 6% tax, 50 more late: the
        // credit grows from 100.00 to 150.00 and the total stays 0.00: nothing to adjust in
        // money, only the credit consumed moves (on_demand +50.00, credit -50.00).
        let t = |amount: &str| {
            Invoice::assemble(
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
                    d("1"),
                    d(amount),
                )],
                Terms {
                    discount_percent: d("0"),
                    credit_balance: d("500"),
                    tax_rate: d("0.06"),
                },
            )
        };
        let (issued, late) = (t("100.00"), t("150.00"));
        assert_eq!(late.total, d("0.00"));
        let diff = differences(Some(&issued), &late);
        assert_eq!(
            diff,
            vec![
                ("credit".to_string(), d("-50.00")),
                ("on_demand".to_string(), d("50.00")),
            ]
        );
        assert!(needs_adjustment(Some(&issued), &late));
    }

    #[test]
    fn no_invoice_issued_means_everything_is_adjustment() {
        let late = invoice(&[(Component::OnDemand, "10.00")], "0");
        // 10.00 - 1.00 discount + 0.54 tax = 9.54.
        let diff = differences(None, &late);
        let sum: Decimal = diff.iter().map(|(_, a)| *a).sum();
        assert_eq!(sum, d("9.54"));
        assert!(needs_adjustment(None, &late));
        let empty = invoice(&[], "0");
        assert!(!needs_adjustment(None, &empty));
        assert!(!needs_adjustment(Some(&late), &late.clone()));
    }

    #[test]
    fn settlement_leaves_a_credit_note_only_for_what_the_invoice_cannot_absorb() {
        assert_eq!(
            settle(d("100.00"), &[adj("-30.00")]),
            (d("70.00"), d("0.00"))
        );
        assert_eq!(
            settle(d("20.00"), &[adj("-30.00")]),
            (d("0.00"), d("10.00"))
        );
        assert_eq!(settle(d("0.00"), &[]), (d("0.00"), d("0.00")));
        assert_eq!(
            settle(d("5.00"), &[adj("12.50"), adj("-2.50")]),
            (d("15.00"), d("0.00"))
        );
        assert_eq!(settle(d("0.00"), &[adj("-0.01")]), (d("0.00"), d("0.01")));
    }

    #[test]
    fn a_note_nets_each_original_and_credits_only_those_below_zero() {
        // Three lines against 2026-11 (INV-2026-000001): -3.00 - 2.20 + 1.00 = -4.20, credited.
        // 2026-10 nets +0.50 (owed, not credited); 2026-12 had no invoice and nets -1.00.
        let line = |period: &str, number: Option<&str>, amount: &str| AdjustmentLine {
            period: period.into(),
            invoice_id: number.map(|n| format!("id-{n}")),
            invoice_number: number.map(Into::into),
            component: "on_demand".into(),
            amount: d(amount),
        };
        let nov = Some("INV-2026-000001");
        let lines = [
            line("2026-12", None, "-1.00"),
            line("2026-11", nov, "-3.00"),
            line("2026-10", Some("INV-2026-000000"), "0.50"),
            line("2026-11", nov, "-2.20"),
            line("2026-11", nov, "1.00"),
        ];
        assert_eq!(
            credited_originals(&lines),
            vec![
                CreditedOriginal {
                    period: "2026-11".into(),
                    invoice_id: Some("id-INV-2026-000001".into()),
                    invoice_number: Some("INV-2026-000001".into()),
                    amount: d("-4.20"),
                },
                CreditedOriginal {
                    period: "2026-12".into(),
                    invoice_id: None,
                    invoice_number: None,
                    amount: d("-1.00"),
                },
            ]
        );
        assert!(credited_originals(&[]).is_empty());
    }

    #[test]
    fn status_follows_payments_and_the_clock() {
        let day = 86_400_000;
        assert_eq!(
            status(d("10.00"), d("0"), 0, 29 * day, 30).as_str(),
            "issued"
        );
        assert_eq!(
            status(d("10.00"), d("0"), 0, 30 * day, 30).as_str(),
            "overdue"
        );
        assert_eq!(
            status(d("10.00"), d("9.99"), 0, 31 * day, 30).as_str(),
            "overdue"
        );
        assert_eq!(
            status(d("10.00"), d("10.00"), 0, 31 * day, 30).as_str(),
            "paid"
        );
        assert_eq!(status(d("0.00"), d("0"), 0, 0, 30).as_str(), "paid");
    }
}
