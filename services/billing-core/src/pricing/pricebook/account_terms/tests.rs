//! Command terms merged into a price book, with the errors they name.

use crate::pricing::pricebook::{AccountTerm, PriceBook, TermKind};
use rust_decimal::Decimal;
use serde_json::Value as Json;

const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"
[skus."gpu.h100"]
rate_per_hour = "24.00"
[[packages]]
account = "acme"
id = "pk"
sku = "gpu.h100"
hours = "10"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "100.00"
[[discounts]]
account = "acme"
percent = "60"
"#;

fn term(kind: TermKind, id: &str, body: Json) -> AccountTerm {
    AccountTerm {
        account: "acme".into(),
        kind,
        term_id: id.into(),
        fields: body.as_object().unwrap().clone(),
    }
}

#[test]
fn a_command_package_with_the_books_id_replaces_it_and_others_follow() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    let pk = |hours: &str| {
        serde_json::json!({"sku":"gpu.h100","hours":hours,"from":"2026-11-01T00:00:00Z",
            "to":"2026-12-01T00:00:00Z","price":"0"})
    };
    let merged = book
        .with_account_terms(&[
            term(TermKind::Packages, "pk", pk("20")),
            term(TermKind::Packages, "pk2", pk("1")),
        ])
        .unwrap();
    assert_eq!(merged.packages.len(), 2);
    assert_eq!(merged.packages[0].id, "pk");
    assert_eq!(merged.packages[0].unit_seconds, Decimal::from(72_000));
    assert_eq!(merged.packages[0].price, Decimal::ZERO);
    assert_eq!(merged.packages[1].index, 1);
}

#[test]
fn errors_name_the_command_term_and_field() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    let e = book
        .with_account_terms(&[term(
            TermKind::Credits,
            "v1",
            serde_json::json!({"amount":"1.234"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "credits.v1.amount", "{e}");
    let e = book
        .with_account_terms(&[term(
            TermKind::Discounts,
            "d",
            serde_json::json!({"percent":"50"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "discounts.d.percent", "{e}");
    assert!(e.to_string().contains("110"), "{e}");
    let e = book
        .with_account_terms(&[term(
            TermKind::Credits,
            "v1",
            serde_json::json!({"amount":"1", "id":"x"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "credits.v1.id", "{e}");
}

/// Section 20 as a command: a charge with the id of the book's own replaces it, another
/// follows it; a negative or zero amount is refused naming `charges.{id}.amount`.
#[test]
fn a_command_charge_merges_by_id_and_refuses_a_non_positive_amount() {
    let book = PriceBook::from_toml(&format!(
        "{BOOK}[[charges]]\naccount = \"acme\"\nid = \"setup\"\namount = \"5.00\"\nat = \"2026-11-02T00:00:00Z\"\n"
    ))
    .unwrap();
    let fee = |amount: &str| {
        serde_json::json!({"description": "数据迁移服务", "amount": amount,
            "at": "2026-11-20T00:00:00.7Z"})
    };
    let merged = book
        .with_account_terms(&[
            term(TermKind::Charges, "migration", fee("800.00")),
            term(TermKind::Charges, "setup", fee("7")),
        ])
        .unwrap();
    let ids: Vec<(&str, usize, String)> = merged
        .charges
        .iter()
        .map(|c| (c.id.as_str(), c.index, c.amount.to_string()))
        .collect();
    assert_eq!(
        ids,
        [("migration", 1, "800.00".into()), ("setup", 2, "7".into())]
    );
    // 2026-11-20T00:00:00Z, floored to the second.
    assert_eq!(merged.charges[0].at, 1_795_132_800);
    assert_eq!(merged.charges[0].line().amount.to_string(), "800.00");
    for amount in ["-800.00", "0"] {
        let e = book
            .with_account_terms(&[term(TermKind::Charges, "bad", fee(amount))])
            .unwrap_err();
        assert_eq!(e.key(), "charges.bad.amount", "{e}");
    }
    let e = book
        .with_account_terms(&[term(
            TermKind::Charges,
            "bad",
            serde_json::json!({"amount": "1.00"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "charges.bad.at", "{e}");
}

/// Section 16 as a command: a scoped, dated, capped discount joins the book's discounts
/// without adding to the plain 60 %, and makes the book a part-3 one; `id` in a discount's
/// body is refused (the term id names it).
#[test]
fn a_command_discount_may_be_scoped_dated_and_capped() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    assert!(!book.uses_part3());
    let scoped = serde_json::json!({"percent": "50", "skus": ["gpu.h100"],
        "components": ["on_demand"], "from": "2026-11-05T00:00:00Z",
        "to": "2026-12-01T00:00:00Z", "cap": "40.00"});
    let merged = book
        .with_account_terms(&[term(TermKind::Discounts, "subsidy", scoped)])
        .unwrap();
    assert_eq!(merged.discount_percent("acme"), Decimal::from(60));
    let d = &merged.discount_terms[1];
    assert_eq!((d.index, d.id.as_deref()), (1, None));
    assert_eq!(d.cap, Some(Decimal::new(4000, 2)));
    assert!(!d.is_plain() && merged.uses_part3());
    // 2026-11-10 to 2026-11-20 overlaps [from, to); December does not.
    assert_eq!(
        merged
            .scoped_discounts("acme", 1_793_836_800, 1_794_700_800)
            .len(),
        1
    );
    assert!(
        merged
            .scoped_discounts("acme", 1_796_083_200, 1_798_761_600)
            .is_empty()
    );
    let e = book
        .with_account_terms(&[term(
            TermKind::Discounts,
            "d",
            serde_json::json!({"percent": "5", "id": "x"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "discounts.d.id", "{e}");
    let e = book
        .with_account_terms(&[term(
            TermKind::Discounts,
            "d",
            serde_json::json!({"percent": "5", "skus": ["gpu.a100"]}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "discounts.d.skus[0]", "{e}");
}

#[test]
fn a_command_credit_counts_in_the_accounts_credit_total() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    let merged = book
        .with_account_terms(&[term(
            TermKind::Credits,
            "v1",
            serde_json::json!({"amount":"50.00","to":"2026-12-01T00:00:00Z"}),
        )])
        .unwrap();
    assert_eq!(merged.credit_total("acme"), Decimal::from(50));
    assert_eq!(merged.credit_terms[0].id.as_deref(), Some("v1"));
}
