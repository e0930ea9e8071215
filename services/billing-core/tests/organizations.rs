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
