//! Issue 27's FOCUS export on an invoice with an allocation (section 18): worked example
//! 3-organization rated by `rate_month` becomes one FOCUS row per allocation row's line (and
//! its discount, credit and tax), and the rows' `BilledCost` by `SubAccountId` is what the
//! allocation gives each member, adding up to the invoice's total.

mod common;

use billing_core::focus::{
    ChargeCategory, DEFAULT_ISSUER, FocusContext, FocusInvoice, billed_total, focus_csv, focus_rows,
};
use billing_core::pricebook::PriceBook;
use billing_core::rating::rate_month;
use common::*;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

#[test]
fn worked_3_organization_rows_add_up_per_sub_account_to_the_allocation() {
    let dir = fixture("worked-3-organization");
    let book = PriceBook::from_toml(&std::fs::read_to_string(dir.join("pricebook.toml")).unwrap())
        .unwrap();
    let events: Vec<String> = std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let rated = rate_month(&book, "2026-11", &meter(&events), None).unwrap();
    let invoice = &rated
        .rated
        .iter()
        .find(|r| r.invoice.account == "acme")
        .expect("acme pays")
        .invoice;
    let allocation = invoice.allocation.as_ref().expect("an allocation");
    let tag = book.allocation_tag.as_deref();
    assert_eq!(tag, Some("project"));
    let names = BTreeMap::new();
    let ctx = FocusContext {
        issuer: DEFAULT_ISSUER,
        allocation_tag: tag,
        names: &names,
    };
    let f = FocusInvoice {
        invoice,
        number: None,
        adjustments: &[],
    };
    let rows = focus_rows(&f, &ctx);

    // Per sub-account: what the allocation gives each member.
    let mut want: BTreeMap<&str, Decimal> = BTreeMap::new();
    for a in allocation {
        *want.entry(a.account.as_str()).or_default() += a.total;
    }
    let mut got: BTreeMap<&str, Decimal> = BTreeMap::new();
    for r in &rows {
        *got.entry(r.sub_account_id.as_str()).or_default() += r.billed_cost;
        assert_eq!(
            r.billing_account_id, "acme",
            "the payer is the billing account"
        );
    }
    assert_eq!(got, want);
    assert_eq!(want.len(), 3, "acme, acme-ml and acme-web: {want:?}");
    // Per (sub-account, tag): each allocation row exactly.
    for a in allocation {
        let tags = if a.tag.is_empty() {
            "{}".to_string()
        } else {
            format!("{{\"project\":\"{}\"}}", a.tag)
        };
        let cell: Decimal = rows
            .iter()
            .filter(|r| r.sub_account_id == a.account && r.tags.as_deref() == Some(&tags))
            .map(|r| r.billed_cost)
            .sum();
        assert_eq!(cell, a.total, "{} {:?}", a.account, a.tag);
        let lines = rows
            .iter()
            .filter(|r| {
                r.sub_account_id == a.account
                    && r.tags.as_deref() == Some(&tags)
                    && matches!(r.category, ChargeCategory::Usage | ChargeCategory::Purchase)
            })
            .count();
        assert_eq!(lines, a.lines.len(), "one row per allocated line");
    }
    let total: Decimal = rows.iter().map(|r| r.billed_cost).sum();
    assert_eq!(total, invoice.total);
    assert_eq!(total, billed_total(&f));
    assert_eq!(invoice.total.to_string(), "357.45");
    // The discount, credit and tax rows are the allocation's, per cell.
    let discount: Decimal = rows
        .iter()
        .filter(|r| r.component == "discount")
        .map(|r| r.billed_cost)
        .sum();
    assert_eq!(discount, -invoice.discount);
    let csv = focus_csv(&rows);
    assert_eq!(csv.lines().count(), rows.len() + 1);
    assert!(
        csv.contains(",acme-ml,acme-ml,\"{\"\"project\"\":\"\"p-x\"\"}\",on_demand\n"),
        "{csv}"
    );
}
