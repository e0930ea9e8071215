//! Section 18 (organizations: payers, pooling, `lease.tags`, allocation): worked example
//! 3-organization figure by figure, hand-worked cases, price book errors, and properties of
//! the allocation (it adds up to the invoice, line by line) and of rating (shuffled and
//! redelivered events give byte-identical invoices).

mod common;

use billing_core::meter::{Admission, Meter};
use billing_core::pricebook::PriceBook;
use billing_core::rating::{MonthRating, rate_month};
use common::*;
use rust_decimal::Decimal;
use serde_json::Value;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// JSON with every decimal string normalized (`"1"` equals `"1.00"`).
fn normalized(v: &Value) -> Value {
    match v {
        Value::String(s) => match s.parse::<Decimal>() {
            Ok(d) => Value::String(d.normalize().to_string()),
            Err(_) => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalized(v))).collect())
        }
        _ => v.clone(),
    }
}

/// Whether `got` shows every figure of `want` (objects: each key of `want`; arrays: same
/// length, element by element; decimal strings as numbers).
fn shows(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                let gv = g
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k} is missing (want {wv})"));
                shows(gv, wv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{at}: got {got:#}, want {want:#}");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                shows(gv, wv, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(normalized(got), normalized(want), "{at}"),
    }
}

fn month(book: &str, label: &str, records: &[String]) -> MonthRating {
    let book = PriceBook::from_toml(book).expect("valid price book");
    rate_month(&book, label, &meter(records), None).unwrap()
}

fn invoices_json(m: &MonthRating) -> Value {
    let invoices: Vec<_> = m.rated.iter().map(|r| r.invoice.clone()).collect();
    serde_json::to_value(&invoices).unwrap()
}

#[test]
fn worked_example_3_organization_shows_every_expected_figure() {
    let dir = fixture("worked-3-organization");
    let book = std::fs::read_to_string(dir.join("pricebook.toml")).unwrap();
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let events: Vec<String> = std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let book = PriceBook::from_toml(&book).unwrap();
    let mut meter = Meter::new();
    for e in &events {
        let a = meter.ingest(e.as_bytes());
        assert!(!matches!(a, Admission::Rejected(_)), "{e}: {a:?}");
    }
    for (period, invoices) in want["rate"].as_object().unwrap() {
        let got = rate_month(&book, period, &meter, None).unwrap();
        shows(&invoices_json(&got), invoices, period);
    }
}

fn tags(id: &str, account: &str, lease: &str, project: &str, at: &str) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"ctl","type":"lease.tags","subject":"{account}","data":{{"lease":"{lease}","tags":{{"project":"{project}"}},"at":"{at}"}}}}"#
    )
}

fn usage(id: &str, account: &str, lease: &str, start: &str, end: &str, q: &str) -> String {
    U {
        id,
        account,
        lease,
        resource: lease,
        sku: "g",
        start,
        end,
        quantity: q,
        ..U::default()
    }
    .json()
}

fn accounts_of(m: &MonthRating) -> Vec<String> {
    m.rated.iter().map(|r| r.invoice.account.clone()).collect()
}

fn one<'a>(m: &'a MonthRating, account: &str) -> &'a billing_core::Invoice {
    &m.rated
        .iter()
        .find(|r| r.invoice.account == account)
        .unwrap_or_else(|| panic!("no invoice for {account}"))
        .invoice
}

const ORG: &str = r#"
[[accounts]]
id = "org"

[[accounts]]
id = "c1"
parent = "org"
pays = "parent"

[[accounts]]
id = "c2"
parent = "org"
pays = "parent"
"#;

#[test]
fn graduated_tiers_pool_over_two_children() {
    // Tier 0 holds 1 h (3,600 us) at 10.00, then 5.00. c1 runs [00:00, 00:45), c2 [00:30,
    // 01:30), 1 unit each. Pooled, in time order: 00:00-00:30 U = 1 (1,800 us), 00:30-00:45
    // U = 2 (1,800 us): tier 0 is full (3,600 us = 10.00); 00:45-01:30 U = 1: 2,700 us in
    // tier 1 = 3.75. Per child, both would sit in tier 0 (2,700 + 3,600 us = 17.50).
    let book = format!(
        "currency = \"CNY\"\n[skus.g]\ntiers = [ {{ up_to_hours = 1, rate_per_hour = \"10.00\" }}, {{ rate_per_hour = \"5.00\" }} ]\n{ORG}"
    );
    let m = month(
        &book,
        "2026-11",
        &[
            usage(
                "u1",
                "c1",
                "L1",
                "2026-11-02T00:00:00Z",
                "2026-11-02T00:45:00Z",
                "1",
            ),
            usage(
                "u2",
                "c2",
                "L2",
                "2026-11-02T00:30:00Z",
                "2026-11-02T01:30:00Z",
                "1",
            ),
        ],
    );
    assert_eq!(accounts_of(&m), ["org"], "only the payer is invoiced");
    let inv = one(&m, "org");
    assert_eq!(
        lines(inv, billing_core::invoice::Component::OnDemand),
        vec![line(0, "1", "3600", "10.00"), line(1, "1", "2700", "3.75")]
    );
    assert_eq!(inv.total.to_string(), "13.75");
    assert!(inv.allocation.is_none(), "no allocation_tag, no allocation");
}

#[test]
fn a_parents_reservation_covers_a_childs_usage() {
    // The payer holds 1 unit over [00:00, 02:00) at 4.00/h; c1 runs 1 unit [00:00, 01:00):
    // covered entirely (3,600 us of reserved_usage, no on_demand), commitment 2 h x 4.00.
    let book = format!(
        "currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"10.00\"\n{ORG}\n[[reservations]]\naccount = \"org\"\nsku = \"g\"\nquantity = \"1\"\nfrom = \"2026-11-02T00:00:00Z\"\nto = \"2026-11-02T02:00:00Z\"\nrate_per_hour = \"4.00\"\n"
    );
    let m = month(
        &book,
        "2026-11",
        &[usage(
            "u1",
            "c1",
            "L1",
            "2026-11-02T00:00:00Z",
            "2026-11-02T01:00:00Z",
            "1",
        )],
    );
    assert_eq!(accounts_of(&m), ["org"]);
    let inv = one(&m, "org");
    let comps: Vec<(&str, String, String)> = inv
        .lines
        .iter()
        .map(|l| {
            (
                l.component.as_str(),
                l.quantity.to_string(),
                l.amount.to_string(),
            )
        })
        .collect();
    assert_eq!(
        comps,
        [
            ("reserved_commitment", "7200".into(), "8.00".into()),
            ("reserved_usage", "3600".into(), "0.00".into())
        ]
    );
    assert_eq!(inv.total.to_string(), "8.00");
}

#[test]
fn a_middle_account_paying_for_itself_gets_its_own_invoice_with_its_leaf() {
    // r <- m (pays self) <- l (pays parent): l's payer is m; r <- k (pays parent): k's is r.
    // At 10.00/h: m's invoice holds m's 0.5 h and l's 1 h (15.00), r's holds k's 2 h (20.00).
    let book = r#"
currency = "CNY"
[skus.g]
rate_per_hour = "10.00"
[[accounts]]
id = "m"
parent = "r"
[[accounts]]
id = "l"
parent = "m"
pays = "parent"
[[accounts]]
id = "k"
parent = "r"
pays = "parent"
"#;
    let m = month(
        book,
        "2026-11",
        &[
            usage(
                "u1",
                "m",
                "M",
                "2026-11-02T00:00:00Z",
                "2026-11-02T00:30:00Z",
                "1",
            ),
            usage(
                "u2",
                "l",
                "L",
                "2026-11-02T00:00:00Z",
                "2026-11-02T01:00:00Z",
                "1",
            ),
            usage(
                "u3",
                "k",
                "K",
                "2026-11-02T00:00:00Z",
                "2026-11-02T02:00:00Z",
                "1",
            ),
        ],
    );
    assert_eq!(accounts_of(&m), ["m", "r"]);
    assert_eq!(one(&m, "m").total.to_string(), "15.00");
    assert_eq!(one(&m, "r").total.to_string(), "20.00");
    let book = PriceBook::from_toml(book).unwrap();
    assert_eq!(book.payer_of("l"), "m");
    assert_eq!(book.payer_of("k"), "r");
    assert_eq!(book.members_of("r"), ["k", "r"]);
}

const ALLOCATED: &str = r#"
currency = "CNY"
allocation_tag = "project"
[skus.g]
rate_per_hour = "1.00"
[tax]
rate = "0.10"
[[discounts]]
account = "a"
percent = "10"
[[credits]]
account = "a"
amount = "0.05"
"#;

#[test]
fn an_allocation_over_two_projects_where_the_remainder_cents_decide() {
    // L1 (p1) runs 1 unit and L2 (p2) 2 units over [00:00, 00:20): one on_demand line of
    // 3,600 us at 1.00/h = 1.00, weights 1,200 : 2,400 = 1 : 2.
    // Line: 100 cents x 1/3 = 33.33 -> 33, x 2/3 = 66.67 -> 66; 1 cent left, to the larger
    //   remainder (p2, .67): p1 0.33, p2 0.67.
    // Discount 10 % = 0.10 over the line totals (33, 67): 3.3 -> 3, 6.7 -> 6; 1 left -> p2
    //   (.7): p1 0.03, p2 0.07.
    // Credit 0.05 over totals less discount (30, 60): 1.67 -> 1, 3.33 -> 3; 1 left -> p1
    //   (.67): p1 0.02, p2 0.03.
    // Tax round(0.85 x 10 %) = round(0.085) = 0.09 over the nets (28, 57): 9 x 28 / 85 =
    //   2.96 -> 2, 9 x 57 / 85 = 6.04 -> 6; 1 left -> p1 (.96): p1 0.03, p2 0.06.
    // Rows: p1 0.33 - 0.03 - 0.02 + 0.03 = 0.31; p2 0.67 - 0.07 - 0.03 + 0.06 = 0.63; sum
    //   0.94 = the invoice's total (1.00 - 0.10 - 0.05 + 0.09).
    let m = month(
        ALLOCATED,
        "2026-11",
        &[
            tags("t1", "a", "L1", "p1", "2026-11-01T00:00:00Z"),
            tags("t2", "a", "L2", "p2", "2026-11-01T00:00:00Z"),
            usage(
                "u1",
                "a",
                "L1",
                "2026-11-02T00:00:00Z",
                "2026-11-02T00:20:00Z",
                "1",
            ),
            usage(
                "u2",
                "a",
                "L2",
                "2026-11-02T00:00:00Z",
                "2026-11-02T00:20:00Z",
                "2",
            ),
        ],
    );
    let inv = one(&m, "a");
    assert_eq!(totals(inv), ["1.00", "0.10", "0.05", "0.09", "0.94"]);
    let rows: Vec<[String; 7]> = inv
        .allocation
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| {
            [
                r.account.clone(),
                r.tag.clone(),
                r.subtotal.to_string(),
                r.discount.to_string(),
                r.credit.to_string(),
                r.tax.to_string(),
                r.total.to_string(),
            ]
        })
        .collect();
    let row = |x: [&str; 7]| x.map(String::from);
    assert_eq!(
        rows,
        [
            row(["a", "p1", "0.33", "0.03", "0.02", "0.03", "0.31"]),
            row(["a", "p2", "0.67", "0.07", "0.03", "0.06", "0.63"]),
        ]
    );
}

#[test]
fn tags_changing_mid_lease_split_to_the_second() {
    // L1 runs 1 unit [10:00:00, 11:00:00) at 3.60/h = 3.60. Its tag is p1 from 09:00, then
    // p2 from 10:20:30.9 (floored to 10:20:30): p1 holds 1,230 s, p2 2,370 s; 360 cents x
    // 1,230 / 3,600 = 123 exactly, p2 237. A point at 10:20:30 whose tags lack `project`
    // loses to p2 at that second (a missing value counts as "", the greatest wins).
    let book =
        "currency = \"CNY\"\nallocation_tag = \"project\"\n[skus.g]\nrate_per_hour = \"3.60\"\n";
    let m = month(
        book,
        "2026-11",
        &[
            tags("t1", "a", "L1", "p1", "2026-11-02T09:00:00Z"),
            tags("t2", "a", "L1", "p2", "2026-11-02T10:20:30.9Z"),
            r#"{"specversion":"1.0","id":"t3","source":"ctl","type":"lease.tags","subject":"a","data":{"lease":"L1","tags":{"team":"x"},"at":"2026-11-02T10:20:30Z"}}"#.to_string(),
            usage("u1", "a", "L1", "2026-11-02T10:00:00Z", "2026-11-02T11:00:00Z", "1"),
        ],
    );
    let inv = one(&m, "a");
    let rows: Vec<(String, String)> = inv
        .allocation
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| (r.tag.clone(), r.lines[0].amount.to_string()))
        .collect();
    assert_eq!(
        rows,
        [
            ("p1".to_string(), "1.23".to_string()),
            ("p2".into(), "2.37".into())
        ]
    );
}

fn book_error(text: &str) -> billing_core::PriceBookError {
    PriceBook::from_toml(text).expect_err("invalid")
}

#[test]
fn price_book_errors_name_the_key_and_the_accounts() {
    let base = "currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"1\"\n";
    // A discount on an account paid for by its parent.
    let e = book_error(&format!(
        "{base}{ORG}\n[[discounts]]\naccount = \"org\"\npercent = \"5\"\n[[discounts]]\naccount = \"c2\"\npercent = \"5\"\n"
    ));
    assert_eq!(e.key(), "discounts[1].account", "{e}");
    assert!(
        e.to_string().contains("\"c2\"") && e.to_string().contains("\"org\""),
        "{e}"
    );
    // A credit likewise.
    let e = book_error(&format!(
        "{base}{ORG}\n[[credits]]\naccount = \"c1\"\namount = \"5\"\n"
    ));
    assert_eq!(e.key(), "credits[0].account", "{e}");
    // A cycle, named.
    let e = book_error(&format!(
        "{base}[[accounts]]\nid = \"a\"\nparent = \"b\"\n[[accounts]]\nid = \"b\"\nparent = \"c\"\n[[accounts]]\nid = \"c\"\nparent = \"a\"\n"
    ));
    assert_eq!(e.key(), "accounts[0].parent", "{e}");
    assert!(e.to_string().contains("a -> b -> c -> a"), "{e}");
    // 9 accounts root to leaf (a0 <- a1 <- ... <- a8); 8 are fine.
    let chain = |n: usize| {
        let mut t = base.to_string();
        for i in 1..n {
            t.push_str(&format!(
                "[[accounts]]\nid = \"a{i}\"\nparent = \"a{}\"\npays = \"parent\"\n",
                i - 1
            ));
        }
        t
    };
    PriceBook::from_toml(&chain(8)).expect("8 levels are fine");
    let e = book_error(&chain(9));
    assert_eq!(e.key(), "accounts[7].parent", "{e}");
    assert!(e.to_string().contains("more than 8"), "{e}");
    // A `pays` that is neither.
    let e = book_error(&format!(
        "{base}[[accounts]]\nid = \"a\"\nparent = \"b\"\npays = \"grandparent\"\n"
    ));
    assert_eq!(e.key(), "accounts[0].pays", "{e}");
    // Two members of one payer with the same package id.
    let pk = |account: &str| {
        format!(
            "[[packages]]\naccount = \"{account}\"\nid = \"pk\"\nsku = \"g\"\nhours = \"1\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2026-12-01T00:00:00Z\"\nprice = \"1\"\n"
        )
    };
    let e = book_error(&format!("{base}{ORG}{}{}", pk("c1"), pk("c2")));
    assert_eq!(e.key(), "packages[1].id", "{e}");
}

#[test]
fn commands_validate_like_the_book() {
    use billing_core::pricebook::{AccountTerm, TermKind};
    let book = PriceBook::from_toml(&format!(
        "currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"1\"\n{ORG}"
    ))
    .unwrap();
    let term = |account: &str, kind: TermKind, id: &str, body: Value| AccountTerm {
        account: account.into(),
        kind,
        term_id: id.into(),
        fields: body.as_object().unwrap().clone(),
    };
    let e = book
        .with_account_terms(&[term(
            "c1",
            TermKind::Discounts,
            "d1",
            serde_json::json!({"percent": "5"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "discounts.d1.account", "{e}");
    // A payer's discount is fine; then its account settings as a command making it pay
    // through its parent break the rule and are refused.
    let ok = book
        .with_account_terms(&[term(
            "org",
            TermKind::Discounts,
            "d1",
            serde_json::json!({"percent": "5"}),
        )])
        .unwrap();
    let e = ok
        .with_account_terms(&[term(
            "org",
            TermKind::Accounts,
            "org",
            serde_json::json!({"parent": "top", "pays": "parent"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "accounts.org.parent", "{e}");
    // New accounts by command take `parent` and `pays`.
    let merged = book
        .with_account_terms(&[term(
            "c3",
            TermKind::Accounts,
            "c3",
            serde_json::json!({"parent": "c1", "pays": "parent"}),
        )])
        .unwrap();
    assert_eq!(merged.payer_of("c3"), "org");
    let e = book
        .with_account_terms(&[term(
            "c3",
            TermKind::Accounts,
            "c3",
            serde_json::json!({"parent": "c1", "pays": "uncle"}),
        )])
        .unwrap_err();
    assert_eq!(e.key(), "accounts.c3.pays", "{e}");
}

#[test]
fn only_payers_are_rated_by_name() {
    let book = PriceBook::from_toml(&format!(
        "currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"1\"\n{ORG}"
    ))
    .unwrap();
    let e = rate_month(&book, "2026-11", &Meter::new(), Some("c1")).unwrap_err();
    assert!(
        e.to_string().contains("\"c1\"") && e.to_string().contains("\"org\""),
        "{e}"
    );
    let m = rate_month(&book, "2026-11", &Meter::new(), Some("org")).unwrap();
    assert_eq!(accounts_of(&m), ["org"]);
}

mod properties {
    //! Random organization workloads: two payers (one inside the other's tree), members two
    //! levels deep, pooled reservation, packages, a subscription, scoped and plain discounts,
    //! credits, a charge, tiers (graduated and volume), off-peak, increments, a minimum, spot,
    //! stopped leases, egress with and without a lease, and tags changing at any second.

    use super::*;
    use billing_core::invoice::{AllocatedLine, Invoice};
    use proptest::prelude::*;

    /// 2026-11-29T00:00:00Z: the window crosses into December in Asia/Shanghai.
    const BASE: i64 = 1_795_910_400;
    const WINDOW: i64 = 3 * 86_400;
    const ACCOUNTS: [&str; 5] = ["p", "c1", "c2", "s", "sc"];

    const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"
allocation_tag = "project"

[skus.g1]
increment_seconds = 600
tiers = [ { up_to_hours = 2, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
spot_rate_per_hour = "9.60"
state_rates = { stopped = "0.50" }

[skus.g2]
minimum_seconds = 900
tier_mode = "volume"
tiers = [ { up_to_hours = 1, rate_per_hour = "7.00" }, { rate_per_hour = "5.00" } ]

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
rate_per_gb = "0.50"

[tax]
rate = "0.06"

[[accounts]]
id = "c1"
parent = "p"
pays = "parent"

[[accounts]]
id = "c2"
parent = "c1"
pays = "parent"

[[accounts]]
id = "s"
parent = "p"

[[accounts]]
id = "sc"
parent = "s"
pays = "parent"

[[reservations]]
account = "c1"
sku = "g1"
quantity = "1"
from = "2026-11-29T00:00:00Z"
to = "2026-11-30T12:00:00Z"
rate_per_hour = "15.00"

[[packages]]
account = "c2"
id = "pk"
sku = "g2"
hours = "1"
from = "2026-11-29T00:00:00Z"
to = "2026-12-31T00:00:00Z"
price = "3.00"

[[packages]]
account = "sc"
id = "pk"
sku = "g2"
hours = "2"
from = "2026-11-29T00:00:00Z"
to = "2026-12-31T00:00:00Z"
price = "5.00"

[[subscriptions]]
account = "s"
id = "sub"
sku = "g1"
quantity = "1"
cycle = "week"
start = "2026-11-30T00:00:00Z"
cycles = 2
price = "100.00"

[[discounts]]
account = "p"
percent = "5"

[[discounts]]
account = "p"
id = "promo"
skus = ["g1"]
components = ["on_demand", "increment"]
percent = "30"
cap = "10.00"

[[credits]]
account = "p"
amount = "20.00"

[[credits]]
account = "s"
amount = "3.00"

[[charges]]
account = "c1"
id = "setup"
amount = "2.50"
at = "2026-11-30T00:00:00Z"
"#;

    #[derive(Debug, Clone)]
    enum Ev {
        Usage {
            account: usize,
            lease: u8,
            g2: bool,
            spot: bool,
            start: i64,
            len: i64,
            quantity: &'static str,
        },
        Tags {
            account: usize,
            lease: u8,
            project: Option<&'static str>,
            at: i64,
        },
        Egress {
            account: usize,
            lease: Option<u8>,
            bytes: u64,
            at: i64,
        },
        Stop {
            account: usize,
            lease: u8,
            stopped: bool,
            at: i64,
        },
    }

    impl Ev {
        fn json(&self, id: usize) -> String {
            let id = format!("e{id}");
            match *self {
                Ev::Usage {
                    account,
                    lease,
                    g2,
                    spot,
                    start,
                    len,
                    quantity,
                } => {
                    let lease = format!("L{lease}");
                    let (start, end) = (rfc(BASE + start), rfc(BASE + start + len));
                    U {
                        id: &id,
                        account: ACCOUNTS[account],
                        lease: &lease,
                        resource: "r0",
                        sku: if g2 { "g2" } else { "g1" },
                        class: if spot { "spot" } else { "on_demand" },
                        start: &start,
                        end: &end,
                        quantity,
                    }
                    .json()
                }
                Ev::Tags {
                    account,
                    lease,
                    project,
                    at,
                } => {
                    let tags = match project {
                        Some(p) => format!(r#"{{"project":"{p}","team":"t"}}"#),
                        None => r#"{"team":"t"}"#.to_string(),
                    };
                    format!(
                        r#"{{"specversion":"1.0","id":"{id}","source":"ctl","type":"lease.tags","subject":"{}","data":{{"lease":"L{lease}","tags":{tags},"at":"{}"}}}}"#,
                        ACCOUNTS[account],
                        rfc(BASE + at)
                    )
                }
                Ev::Egress {
                    account,
                    lease,
                    bytes,
                    at,
                } => {
                    let lease = lease.map_or(String::new(), |l| format!(r#""lease":"L{l}","#));
                    format!(
                        r#"{{"specversion":"1.0","id":"{id}","source":"gw/1","type":"net.egress","subject":"{}","time":"{}","data":{{{lease}"dest":"internet","bytes":{bytes}}}}}"#,
                        ACCOUNTS[account],
                        rfc(BASE + at)
                    )
                }
                Ev::Stop {
                    account,
                    lease,
                    stopped,
                    at,
                } => lease_state(
                    &id,
                    ACCOUNTS[account],
                    &format!("L{lease}"),
                    if stopped { "stopped" } else { "running" },
                    &rfc(BASE + at),
                ),
            }
        }
    }

    fn event() -> impl Strategy<Value = Ev> {
        prop_oneof![
            6 => (0..5usize, 0..3u8, any::<bool>(), prop::bool::weighted(0.2), 0..WINDOW,
                  1..9_000i64, prop::sample::select(vec!["1", "0.5", "2", "0.25"]))
                .prop_map(|(account, lease, g2, spot, start, len, quantity)| Ev::Usage {
                    account, lease, g2, spot, start, len, quantity,
                }),
            4 => (0..5usize, 0..3u8,
                  prop::sample::select(vec![Some("a"), Some("b"), Some(""), None]),
                  -86_400..WINDOW)
                .prop_map(|(account, lease, project, at)| Ev::Tags { account, lease, project, at }),
            2 => (0..5usize, prop::option::of(0..3u8), 1..3_000_000_000u64, 0..WINDOW)
                .prop_map(|(account, lease, bytes, at)| Ev::Egress { account, lease, bytes, at }),
            1 => (0..5usize, 0..3u8, any::<bool>(), 0..WINDOW)
                .prop_map(|(account, lease, stopped, at)| Ev::Stop { account, lease, stopped, at }),
        ]
    }

    /// The allocation of `inv` adds up to it exactly: per line identity, subtotal, discount,
    /// credit, tax and total; each row adds up; rows are sorted by (account, tag).
    fn check_allocation(inv: &Invoice) {
        let rows = inv
            .allocation
            .as_ref()
            .expect("an allocation_tag book allocates");
        type Id = (
            String,
            Option<String>,
            Option<String>,
            usize,
            Option<Decimal>,
            Option<Decimal>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let id = |l: &AllocatedLine| -> Id {
            (
                l.component.as_str().to_string(),
                l.sku.clone(),
                l.dest.clone(),
                l.tier,
                l.multiplier,
                l.price,
                l.package.clone(),
                l.subscription.clone(),
                l.charge.clone(),
            )
        };
        let mut want: std::collections::BTreeMap<Id, Decimal> = Default::default();
        for l in inv.lines.iter().filter(|l| !l.amount.is_zero()) {
            *want
                .entry(id(&AllocatedLine::part_of(l, l.amount)))
                .or_default() += l.amount;
        }
        let mut got: std::collections::BTreeMap<Id, Decimal> = Default::default();
        for r in rows {
            for l in &r.lines {
                assert!(!l.amount.is_zero(), "a row shows only non-zero parts");
                *got.entry(id(l)).or_default() += l.amount;
            }
            let lines: Decimal = r.lines.iter().map(|l| l.amount).sum();
            assert_eq!(lines, r.subtotal, "{}/{}: lines add up", r.account, r.tag);
            assert_eq!(r.subtotal - r.discount - r.credit + r.tax, r.total);
            for x in [r.subtotal, r.discount, r.credit, r.tax, r.total] {
                assert!(x >= Decimal::ZERO && x.scale() == 2, "{x}");
            }
        }
        assert_eq!(got, want, "the rows add up to every line");
        let sum = |f: fn(&billing_core::invoice::AllocationRow) -> Decimal| -> Decimal {
            rows.iter().map(f).sum()
        };
        assert_eq!(sum(|r| r.subtotal), inv.subtotal);
        assert_eq!(sum(|r| r.discount), inv.discount);
        assert_eq!(sum(|r| r.credit), inv.credit);
        assert_eq!(sum(|r| r.tax), inv.tax);
        assert_eq!(sum(|r| r.total), inv.total);
        let keys: Vec<(&str, &str)> = rows.iter().map(|r| (&*r.account, &*r.tag)).collect();
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "sorted, one row per cell: {keys:?}"
        );
    }

    /// Every invoice of the two months the window touches, as JSON, each checked.
    fn rate_json(book: &PriceBook, records: &[String]) -> String {
        let meter = meter(records);
        let mut out = String::new();
        for label in ["2026-11", "2026-12"] {
            let month = rate_month(book, label, &meter, None).unwrap();
            for r in &month.rated {
                let inv = &r.invoice;
                assert!(book.is_payer(&inv.account), "only payers: {}", inv.account);
                check_allocation(inv);
                out.push_str(&serde_json::to_string(inv).unwrap());
                out.push_str(&serde_json::to_string(&r.unpriced).unwrap());
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn allocations_add_up_and_invoices_are_a_function_of_the_set_of_events(
            events in prop::collection::vec(event(), 1..40),
            seed in any::<u64>(),
            redeliver in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        ) {
            let book = PriceBook::from_toml(BOOK).unwrap();
            let records: Vec<String> =
                events.iter().enumerate().map(|(i, e)| e.json(i)).collect();
            let want = rate_json(&book, &records);
            let mut sent = records.clone();
            for i in &redeliver {
                sent.push(records[i.index(records.len())].clone());
            }
            let mut state = seed | 1;
            for i in (1..sent.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                sent.swap(i, (state % (i as u64 + 1)) as usize);
            }
            prop_assert_eq!(rate_json(&book, &sent), want);
        }
    }
}
