//! Issue 27: `GET /v1/admin/exports/focus?period=` answers the closed period's invoices as a
//! FinOps FOCUS CSV that the FinOps Foundation's validator accepts, on SQLite and PostgreSQL.
//!
//! Two accounts use November: acme (a 10 % discount, a profile name with a comma) at home in
//! CNY and in us-west in USD, beta at home; the book has tax in both regions. Each invoice's
//! rows add up to its total (`BilledCost`), and the real `focus-validator` (pinned in
//! `tests/focus/requirements.txt`, installed by `./scripts/services.sh python-tools` into
//! `${XDG_CACHE_HOME:-$HOME/.cache}/gpubill/venv-focus`) passes the file. A missing or stale
//! validator fails the test with how to install it; nothing is skipped. The validator is also
//! run on the allocated rows of worked example 3-organization (Tags, sub-accounts), and on a
//! broken file, which it must reject (so a passing run means something).

use axum::http::StatusCode;
use billing_core::focus::{DEFAULT_ISSUER, FocusContext, FocusInvoice, focus_csv, focus_rows};
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "24.00"

[tax]
rate = "0.06"

[regions."us-west"]
currency = "USD"
timezone = "UTC"
[regions."us-west".skus."gpu.h100"]
rate_per_hour = "3.20"
[regions."us-west".tax]
rate = "0.0725"

[[discounts]]
account = "acme"
percent = "10"
"#;

const INSTALL: &str = "install it with ./scripts/services.sh python-tools (./scripts/test does)";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv `scripts/services.sh python-tools` makes for focus-validator.
fn venv() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    cache.join("gpubill").join("venv-focus")
}

/// `focus-validator==<version>` of tests/focus/requirements.txt.
fn pinned() -> String {
    let path = repo().join("tests/focus/requirements.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|l| l.strip_prefix("focus-validator=="))
        .unwrap_or_else(|| panic!("focus-validator is not pinned in {}", path.display()))
        .trim()
        .to_string()
}

/// Runs focus-validator (FOCUS 1.0 rules) on `csv`; returns (passed, its output). Panics when
/// the validator is missing or not the pinned version.
fn validate(csv: &str, name: &str) -> (bool, String) {
    let bin = venv().join("bin").join("focus-validator");
    let python = venv().join("bin").join("python");
    assert!(bin.is_file(), "{} is missing: {INSTALL}", bin.display());
    // The installed version, and where its package lies: it reads its currency codes from
    // `focus_validator/utils/currency_codes.csv` relative to the working directory.
    let out = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m, os, focus_validator as f; \
             print(m.version('focus-validator')); print(os.path.dirname(os.path.dirname(f.__file__)))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL}", python.display()));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut lines = text.lines();
    let (version, site) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    assert!(
        out.status.success() && version == pinned(),
        "focus-validator {version:?} in {} is not the pinned {}: {INSTALL}\n{}",
        venv().display(),
        pinned(),
        String::from_utf8_lossy(&out.stderr)
    );
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let file = std::env::temp_dir().join(format!(
        "gpubill-focus-{name}-{}-{nanos}.csv",
        std::process::id()
    ));
    std::fs::write(&file, csv).unwrap();
    let out = Command::new(&bin)
        .current_dir(site)
        .arg("--data-file")
        .arg(&file)
        .args(["--validate-version", "1.0"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL}", bin.display()));
    let _ = std::fs::remove_file(&file);
    let text = format!(
        "{}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // focus-validator exits 0 either way: its verdict is its last line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed = out.status.success()
        && stdout.trim_end().ends_with("Validation succeeded.")
        && !stdout.contains("failed");
    (passed, text)
}

/// RFC 4180 records of `text` (quoted fields with `""`, no line break inside a field here).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| {
            let mut fields = vec![String::new()];
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match (c, quoted) {
                    ('"', true) if chars.peek() == Some(&'"') => {
                        chars.next();
                        fields.last_mut().unwrap().push('"');
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => fields.push(String::new()),
                    (c, _) => fields.last_mut().unwrap().push(c),
                }
            }
            fields
        })
        .collect()
}

/// The CSV's rows as column name to value.
fn records(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut rows = parse_csv(text).into_iter();
    let header = rows.next().expect("a header");
    rows.map(|r| {
        assert_eq!(r.len(), header.len(), "{r:?}");
        header.iter().cloned().zip(r).collect()
    })
    .collect()
}

fn usage(id: &str, account: &str, region: Option<&str>, start: &str, end: &str) -> String {
    let mut data = serde_json::json!({"lease": id, "resource": id, "sku": "gpu.h100",
        "start": start, "end": end});
    if let Some(r) = region {
        data["region"] = Value::String(r.into());
    }
    serde_json::json!({"specversion": "1.0", "id": id, "source": "node/1",
        "type": "gpu.usage", "subject": account, "data": data})
    .to_string()
}

async fn export(t: &TestApp, period: &str) -> (StatusCode, String) {
    let (s, body) = t
        .raw(
            "GET",
            &format!("/v1/admin/exports/focus?period={period}"),
            Some(ADMIN),
            "application/json",
            "",
        )
        .await;
    (s, String::from_utf8(body).unwrap())
}

async fn focus_export_validates(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    t.account("beta").await;
    for (uri, body) in [
        ("/v1/admin/seller", r#"{"name":"GPU Cloud Ltd"}"#),
        (
            "/v1/admin/accounts/acme/profile",
            r#"{"name":"Acme, Inc."}"#,
        ),
    ] {
        let (s, v) = t.admin("PUT", uri, body).await;
        assert!(s.is_success(), "{uri}: {s} {v}");
    }
    t.ingest(&[
        usage(
            "a1",
            "acme",
            None,
            "2026-11-03T00:00:00Z",
            "2026-11-03T10:00:00Z",
        ),
        usage(
            "a2",
            "acme",
            Some("us-west"),
            "2026-11-04T00:00:00Z",
            "2026-11-04T05:00:00Z",
        ),
        usage(
            "b1",
            "beta",
            None,
            "2026-11-05T00:00:00Z",
            "2026-11-05T03:00:00Z",
        ),
    ])
    .await;

    // Refusals: no period, a bad one, an open one.
    let (s, body) = t
        .raw("GET", "/v1/admin/exports/focus", Some(ADMIN), "", "")
        .await;
    assert_eq!(
        s,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let (s, body) = export(&t, "2026-13").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("2026-13"), "{body}");
    let (s, body) = export(&t, "2026-11").await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert!(
        body.contains("2026-11") && body.contains("not closed"),
        "{body}"
    );
    let (s, _) = t
        .raw(
            "GET",
            "/v1/admin/exports/focus?period=2026-11",
            Some(INGEST),
            "",
            "",
        )
        .await;
    assert!(
        s == StatusCode::FORBIDDEN || s == StatusCode::UNAUTHORIZED,
        "{s}"
    );

    let issued = t.close("2026-11").await;
    let issued = issued.as_array().unwrap();
    assert_eq!(issued.len(), 3, "acme home and us-west, beta: {issued:#?}");
    let (s, csv) = export(&t, "2026-11").await;
    assert_eq!(s, StatusCode::OK, "{csv}");
    let rows = records(&csv);

    // Each invoice's rows add up to its total.
    for inv in issued {
        let number = inv["number"].as_str().unwrap();
        let mine: Vec<_> = rows.iter().filter(|r| r["InvoiceId"] == number).collect();
        assert!(!mine.is_empty(), "no rows for {number}:\n{csv}");
        let billed: Decimal = mine
            .iter()
            .map(|r| r["BilledCost"].parse::<Decimal>().unwrap())
            .sum();
        let total: Decimal = inv["total"].as_str().unwrap().parse().unwrap();
        assert_eq!(billed, total, "{number}:\n{csv}");
        let effective: Decimal = mine
            .iter()
            .map(|r| r["EffectiveCost"].parse::<Decimal>().unwrap())
            .sum();
        assert_eq!(effective, total, "{number}");
        for r in &mine {
            assert_eq!(r["BillingAccountId"], inv["account"].as_str().unwrap());
            assert_eq!(r["SubAccountId"], inv["account"].as_str().unwrap());
            assert_eq!(r["BillingCurrency"], inv["currency"].as_str().unwrap());
            assert_eq!(r["BillingPeriodStart"], "2026-11-01T00:00:00Z");
            assert_eq!(r["BillingPeriodEnd"], "2026-12-01T00:00:00Z");
            assert_eq!(r["ProviderName"], "GPU Cloud Ltd");
            assert_eq!(r["InvoiceIssuer"], "GPU Cloud Ltd");
        }
    }
    let by = |account: &str, currency: &str, category: &str| -> Vec<&BTreeMap<String, String>> {
        rows.iter()
            .filter(|r| {
                r["BillingAccountId"] == account
                    && r["BillingCurrency"] == currency
                    && r["ChargeCategory"] == category
            })
            .collect()
    };
    // acme at home: 10 h of 24.00 = 240.00, discount 24.00, tax 6 % of 216.00 = 12.96.
    let usage_rows = by("acme", "CNY", "Usage");
    assert_eq!(usage_rows.len(), 1, "{csv}");
    assert_eq!(usage_rows[0]["BilledCost"], "240.00");
    assert_eq!(usage_rows[0]["ListCost"], "240.00");
    assert_eq!(usage_rows[0]["SkuId"], "gpu.h100");
    assert_eq!(usage_rows[0]["ConsumedQuantity"], "36000.0");
    assert_eq!(usage_rows[0]["ConsumedUnit"], "Unit-Seconds");
    assert_eq!(usage_rows[0]["PricingCategory"], "Standard");
    assert_eq!(usage_rows[0]["BillingAccountName"], "Acme, Inc.");
    assert_eq!(usage_rows[0]["RegionId"], "");
    let credit = by("acme", "CNY", "Credit");
    assert_eq!(credit.len(), 1, "{csv}");
    assert_eq!(credit[0]["BilledCost"], "-24.00");
    assert_eq!(credit[0]["x_Component"], "discount");
    assert_eq!(by("acme", "CNY", "Tax")[0]["BilledCost"], "12.96");
    // acme in us-west: USD, its region, its tax; beta: no discount, its id as its name.
    let west = by("acme", "USD", "Usage");
    assert_eq!(west.len(), 1, "{csv}");
    assert_eq!(west[0]["RegionId"], "us-west");
    assert_eq!(west[0]["BilledCost"], "16.00");
    assert_eq!(by("acme", "USD", "Tax").len(), 1, "{csv}");
    assert!(by("beta", "CNY", "Credit").is_empty(), "{csv}");
    assert_eq!(by("beta", "CNY", "Usage")[0]["SubAccountName"], "beta");

    let (passed, out) = validate(&csv, "engine");
    assert!(passed, "focus-validator rejects the export:\n{out}\n{csv}");
    t.shutdown().await;
}

on_both!(focus_export_validates);

/// Worked example 3-organization's payer invoice with its allocation (section 18): rows per
/// allocation cell, `Tags` with the project, valid under focus-validator.
#[test]
fn allocated_rows_validate() {
    let book = fixture("worked-3-organization/pricebook.toml");
    let events: Vec<String> = fixture("worked-3-organization/events.jsonl")
        .lines()
        .map(String::from)
        .collect();
    let invoices: Vec<billing_core::Invoice> = offline_invoices(&book, &events, "2026-11")
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let names = BTreeMap::new();
    let ctx = FocusContext {
        issuer: DEFAULT_ISSUER,
        allocation_tag: Some("project"),
        names: &names,
    };
    let mut rows = Vec::new();
    for i in &invoices {
        assert!(i.allocation.is_some(), "{i:?}");
        rows.extend(focus_rows(
            &FocusInvoice {
                invoice: i,
                number: None,
                adjustments: &[],
            },
            &ctx,
        ));
    }
    let csv = focus_csv(&rows);
    let recs = records(&csv);
    assert!(
        recs.iter()
            .any(|r| r["SubAccountId"] == "acme-ml" && r["Tags"] == r#"{"project":"p-y"}"#),
        "{csv}"
    );
    let (passed, out) = validate(&csv, "allocation");
    assert!(
        passed,
        "focus-validator rejects the allocated rows:\n{out}\n{csv}"
    );
}

/// The validator is not a rubber stamp: a file with a cost that is not a number and an unknown
/// charge frequency fails.
#[test]
fn the_validator_rejects_a_broken_file() {
    let book = fixture("worked-3-organization/pricebook.toml");
    let events: Vec<String> = fixture("worked-3-organization/events.jsonl")
        .lines()
        .map(String::from)
        .collect();
    let invoice: billing_core::Invoice =
        serde_json::from_value(offline_invoices(&book, &events, "2026-11").remove(0)).unwrap();
    let names = BTreeMap::new();
    let ctx = FocusContext {
        issuer: DEFAULT_ISSUER,
        allocation_tag: None,
        names: &names,
    };
    let rows = focus_rows(
        &FocusInvoice {
            invoice: &invoice,
            number: None,
            adjustments: &[],
        },
        &ctx,
    );
    let csv = focus_csv(&rows)
        .replacen("Usage-Based", "Sometimes", 1)
        .replacen("\n0.25,", "\nabc,", 1);
    assert!(csv.contains("Sometimes") && csv.contains("\nabc,"), "{csv}");
    let (passed, out) = validate(&csv, "broken");
    assert!(!passed, "focus-validator accepts a broken file:\n{out}");
    assert!(out.contains("ChargeFrequency"), "{out}");
}
