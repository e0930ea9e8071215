//! Issue 27: moves of accounts over time. An `[[accounts]]` entry's `moves` give its place
//! from a month on; every period is rated with the organization after the moves from its
//! month or earlier, so earlier periods keep their payer. Worked numbers, errors naming the
//! key and the month, and the same moves given as an `accounts` term by command.

mod common;

use billing_core::meter::Meter;
use billing_core::pricebook::{AccountTerm, PriceBook, TermKind};
use billing_core::rating::rate_month;
use common::*;

/// Two roots; `team` is paid for by `east` until November and by `west` from December.
const MOVED: &str = r#"
currency = "CNY"
[skus.g]
rate_per_hour = "10.00"

[[accounts]]
id = "east"

[[accounts]]
id = "west"

[[accounts]]
id = "team"
parent = "east"
pays = "parent"
moves = [ { from = "2026-12", parent = "west", pays = "parent" } ]
"#;

fn usage(id: &str, account: &str, start: &str, end: &str) -> String {
    U {
        id,
        account,
        lease: id,
        resource: id,
        sku: "g",
        start,
        end,
        quantity: "1",
        ..U::default()
    }
    .json()
}

/// `team` 1 h in November, 2 h in December; `west` 30 min in December.
fn meter() -> Meter {
    common::meter(&[
        usage("n1", "team", "2026-11-20T00:00:00Z", "2026-11-20T01:00:00Z"),
        usage("d1", "team", "2026-12-03T00:00:00Z", "2026-12-03T02:00:00Z"),
        usage("d2", "west", "2026-12-03T00:00:00Z", "2026-12-03T00:30:00Z"),
    ])
}

/// (payer, total) of every invoice of the month.
fn totals(book: &PriceBook, label: &str) -> Vec<(String, String)> {
    rate_month(book, label, &meter(), None)
        .unwrap()
        .rated
        .iter()
        .map(|r| (r.invoice.account.clone(), r.invoice.total.to_string()))
        .collect()
}

#[test]
fn a_move_changes_the_payer_from_its_month_on_and_never_before() {
    let book = PriceBook::from_toml(MOVED).unwrap();
    // November: team's hour (10.00) is on east's invoice; west has nothing.
    assert_eq!(
        totals(&book, "2026-11"),
        [
            ("east".into(), "10.00".into()),
            ("west".into(), "0.00".into())
        ]
    );
    // December: team's 2 h (20.00) and west's own 30 min (5.00) on west's invoice: 25.00.
    assert_eq!(
        totals(&book, "2026-12"),
        [
            ("east".into(), "0.00".into()),
            ("west".into(), "25.00".into())
        ]
    );
    assert_eq!(book.at_period("2026-11").payer_of("team"), "east");
    assert_eq!(book.at_period("2026-12").payer_of("team"), "west");
    assert_eq!(book.at_period("2027-06").payer_of("team"), "west");
    // The tree moves with the payer: team's parent is west from December.
    assert_eq!(
        book.at_period("2026-12").org.parent_of("team"),
        Some("west")
    );
    assert_eq!(
        book.at_period("2026-10").org.parent_of("team"),
        Some("east")
    );
    // In November team is not a payer; from December, naming it is still refused (west pays).
    assert!(rate_month(&book, "2026-11", &meter(), Some("team")).is_err());
    assert!(rate_month(&book, "2026-12", &meter(), Some("team")).is_err());
}

#[test]
fn a_move_to_pay_for_itself_gives_the_account_its_own_invoice_from_then() {
    let book = PriceBook::from_toml(&MOVED.replace(
        r#"moves = [ { from = "2026-12", parent = "west", pays = "parent" } ]"#,
        r#"moves = [ { from = "2026-12", parent = "east", pays = "self" } ]"#,
    ))
    .unwrap();
    assert_eq!(totals(&book, "2026-11")[0], ("east".into(), "10.00".into()));
    let dec = totals(&book, "2026-12");
    assert!(dec.contains(&("team".into(), "20.00".into())), "{dec:?}");
    assert!(dec.contains(&("east".into(), "0.00".into())), "{dec:?}");
}

#[test]
fn moves_are_checked_in_every_month_they_start_and_errors_name_the_key() {
    let err = |text: &str| PriceBook::from_toml(text).expect_err("invalid");
    // Not a month.
    let e = err(&MOVED.replace("from = \"2026-12\"", "from = \"2026-12-05\""));
    assert_eq!(e.key(), "accounts[2].moves[0].from", "{e}");
    // Out of order.
    let e = err(&MOVED.replace(
        r#"moves = [ { from = "2026-12", parent = "west", pays = "parent" } ]"#,
        r#"moves = [ { from = "2026-12", parent = "west" }, { from = "2026-12", parent = "east" } ]"#,
    ));
    assert_eq!(e.key(), "accounts[2].moves[1].from", "{e}");
    // A cycle from January: west moves under team, team is under west since December.
    let e = err(&format!(
        "{}\n",
        MOVED.replace(
            "[[accounts]]\nid = \"west\"\n",
            "[[accounts]]\nid = \"west\"\nmoves = [ { from = \"2027-01\", parent = \"team\" } ]\n"
        )
    ));
    assert!(e.to_string().contains("west -> team -> west"), "{e}");
    assert!(e.to_string().contains("from 2027-01"), "{e}");
    // A credit on team: team pays for itself before any move (no parent), not from December.
    let e = err(&format!(
        "{}\n[[credits]]\naccount = \"team\"\namount = \"5\"\n",
        MOVED.replace("parent = \"east\"\npays = \"parent\"\n", "")
    ));
    assert_eq!(e.key(), "credits[0].account", "{e}");
    assert!(e.to_string().contains("from 2026-12"), "{e}");
}

#[test]
fn moves_given_by_command_rate_like_the_book() {
    let plain = MOVED.replace(
        "[[accounts]]\nid = \"team\"\nparent = \"east\"\npays = \"parent\"\nmoves = [ { from = \"2026-12\", parent = \"west\", pays = \"parent\" } ]\n",
        "",
    );
    let book = PriceBook::from_toml(&plain).unwrap();
    let term = AccountTerm {
        account: "team".into(),
        kind: TermKind::Accounts,
        term_id: "team".into(),
        fields: serde_json::json!({
            "parent": "east",
            "pays": "parent",
            "moves": [{"from": "2026-12", "parent": "west", "pays": "parent"}],
        })
        .as_object()
        .unwrap()
        .clone(),
    };
    let merged = book
        .with_account_terms(std::slice::from_ref(&term))
        .unwrap();
    let from_book = PriceBook::from_toml(MOVED).unwrap();
    for label in ["2026-11", "2026-12"] {
        assert_eq!(totals(&merged, label), totals(&from_book, label), "{label}");
    }
    // A move by command that makes a cycle names the month.
    let mut bad = term;
    bad.account = "west".into();
    bad.term_id = "west".into();
    bad.fields = serde_json::json!({"moves": [{"from": "2027-02", "parent": "team"}]})
        .as_object()
        .unwrap()
        .clone();
    let e = merged.with_account_terms(&[bad]).unwrap_err();
    assert!(e.to_string().contains("team -> west -> team"), "{e}");
    assert!(e.to_string().contains("from 2027-02"), "{e}");
}
