//! The event JSON Schemas in `schemas/` and the decoder agree on every example of every event
//! type, part 2 included (the workspace's `tests/schemas.rs` checks the same from outside).

use billing_core::event::decode_any;
use billing_core::pricebook::PriceBook;
use serde_json::Value;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = root().join("schemas").join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn examples(name: &str, kind: &str) -> Vec<(String, String)> {
    let dir = root().join("schemas/examples").join(name).join(kind);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no examples in {}", dir.display());
    out
}

#[test]
fn rental_event_schemas_and_the_decoder_agree_on_every_example() {
    for name in [
        "gpu.usage",
        "net.egress",
        "lease.state",
        "spot.price",
        "node.fault",
        "net.counter",
        "lease.tags",
    ] {
        let v = schema(name);
        for (file, text) in examples(name, "valid") {
            let instance: Value = serde_json::from_str(&text).unwrap();
            assert!(
                v.is_valid(&instance),
                "{name}/valid/{file} fails the schema"
            );
            // One reader for the engine and `gpubill rate`, `lease.tags` included.
            let e = decode_any(text.trim().as_bytes())
                .unwrap_or_else(|r| panic!("{name}/valid/{file} rejected: {r}"));
            assert_eq!(e.data_type(), name);
        }
        for (file, text) in examples(name, "invalid") {
            let instance: Value = serde_json::from_str(&text).unwrap();
            assert!(
                !v.is_valid(&instance),
                "{name}/invalid/{file} passes the schema"
            );
            assert!(
                decode_any(text.trim().as_bytes()).is_err(),
                "{name}/invalid/{file} accepted by the decoder"
            );
        }
    }
}

#[test]
fn invoices_with_an_allocation_match_the_invoice_schema() {
    // Section 18: worked example 3-organization, one payer invoice with its allocation.
    let dir = root().join("tests/fixtures/worked-3-organization");
    let book = PriceBook::from_toml(&std::fs::read_to_string(dir.join("pricebook.toml")).unwrap())
        .unwrap();
    let mut meter = billing_core::meter::Meter::new();
    for line in std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
    {
        meter.ingest(line.as_bytes());
    }
    let month = billing_core::rating::rate_month(&book, "2026-11", &meter, None).unwrap();
    let invoices: Vec<_> = month.rated.into_iter().map(|r| r.invoice).collect();
    assert!(invoices[0].allocation.is_some());
    let instance = serde_json::to_value(&invoices).unwrap();
    let v = schema("invoice");
    let errors: Vec<String> = v.iter_errors(&instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{instance:#}");
    let back: Vec<billing_core::Invoice> = serde_json::from_value(instance).unwrap();
    assert_eq!(back, invoices);
}

fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => Value::from(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

#[test]
fn pricebook_schema_and_the_parser_agree_on_every_example() {
    let v = schema("pricebook");
    for (file, text) in examples("pricebook", "valid") {
        let instance = toml_to_json(text.parse::<toml::Table>().map(toml::Value::Table).unwrap());
        assert!(
            v.is_valid(&instance),
            "pricebook/valid/{file} fails the schema"
        );
        PriceBook::from_toml(&text).unwrap_or_else(|e| panic!("pricebook/valid/{file}: {e}"));
    }
    for (file, text) in examples("pricebook", "invalid") {
        let instance = toml_to_json(text.parse::<toml::Table>().map(toml::Value::Table).unwrap());
        assert!(
            !v.is_valid(&instance),
            "pricebook/invalid/{file} passes the schema"
        );
        let e = PriceBook::from_toml(&text).expect_err(&file);
        assert!(!e.key().is_empty(), "pricebook/invalid/{file}: {e}");
        // Both refuse the same thing: some schema error sits at the parser's key or at a table
        // above it (a missing key, or a rule over several keys, is the table's error).
        let key = key_segments(e.key());
        let paths: Vec<Vec<String>> = v
            .iter_errors(&instance)
            .map(|err| {
                err.instance_path
                    .to_string()
                    .split('/')
                    .skip(1)
                    .map(|s| s.replace("~1", "/").replace("~0", "~"))
                    .collect()
            })
            .collect();
        assert!(
            paths.iter().any(|p| key.starts_with(p)),
            "pricebook/invalid/{file}: the parser refuses {key:?} ({e}), the schema {paths:?}"
        );
    }
}

/// A parser error key (`skus."gpu.h100".tiers[0].up_to_hours`) as path segments
/// (`["skus", "gpu.h100", "tiers", "0", "up_to_hours"]`).
fn key_segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = key.chars().peekable();
    let mut bare = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut quoted = String::new();
                while let Some(q) = chars.next() {
                    match q {
                        '\\' => quoted.extend(chars.next()),
                        '"' => break,
                        _ => quoted.push(q),
                    }
                }
                out.push(quoted);
            }
            '.' | '[' | ']' => {
                if !bare.is_empty() {
                    out.push(std::mem::take(&mut bare));
                }
            }
            _ => bare.push(c),
        }
    }
    if !bare.is_empty() {
        out.push(bare);
    }
    out
}

#[test]
fn invoices_with_part_2_lines_match_the_invoice_schema() {
    let v = schema("invoice");
    for (file, text) in examples("invoice", "valid") {
        let instance: Value = serde_json::from_str(&text).unwrap();
        assert!(
            v.is_valid(&instance),
            "invoice/valid/{file} fails the schema"
        );
        let _: Vec<billing_core::Invoice> = serde_json::from_value(instance).unwrap();
    }
    for (file, text) in examples("invoice", "invalid") {
        let instance: Value = serde_json::from_str(&text).unwrap();
        assert!(
            !v.is_valid(&instance),
            "invoice/invalid/{file} passes the schema"
        );
    }
}

#[test]
fn invoices_the_core_produces_with_part_2_lines_match_the_invoice_schema() {
    use billing_core::meter::Meter;
    use billing_core::period::Period;
    let book = PriceBook::from_toml(
        &std::fs::read_to_string(root().join("schemas/examples/pricebook/valid/rental.toml"))
            .unwrap(),
    )
    .unwrap();
    let events = [
        r#"{"specversion":"1.0","id":"u1","source":"node/7","type":"gpu.usage","subject":"acme","data":{"lease":"L1","resource":"g0","sku":"gpu.h100-80g","start":"2026-11-10T10:00:00Z","end":"2026-11-10T11:00:00Z","quantity":"9"}}"#,
        r#"{"specversion":"1.0","id":"u2","source":"node/7","type":"gpu.usage","subject":"acme","data":{"lease":"L2","resource":"g1","sku":"gpu.h100-80g","class":"spot","start":"2026-11-10T10:00:00Z","end":"2026-11-10T10:30:00Z"}}"#,
        r#"{"specversion":"1.0","id":"s1","source":"ctl","type":"lease.state","subject":"acme","data":{"lease":"L2","state":"preempted","at":"2026-11-10T10:30:00Z"}}"#,
        r#"{"specversion":"1.0","id":"s2","source":"ctl","type":"lease.state","subject":"acme","data":{"lease":"L1","state":"stopped","at":"2026-11-10T10:30:00Z"}}"#,
        r#"{"specversion":"1.0","id":"p1","source":"mkt","type":"spot.price","subject":"gz-a","data":{"sku":"gpu.h100-80g","price_per_hour":"3.20","from":"2026-11-01T00:00:00Z"}}"#,
        r#"{"specversion":"1.0","id":"f1","source":"mon","type":"node.fault","subject":"platform","data":{"node":"node/7","start":"2026-11-10T11:00:00Z","end":"2026-11-10T11:30:00Z"}}"#,
        r#"{"specversion":"1.0","id":"c1","source":"gw","type":"net.counter","subject":"acme","data":{"lease":"L1","interface":"eth0","dest":"internet","bytes_total":5,"at":"2026-11-10T11:30:00Z"}}"#,
    ];
    let mut meter = Meter::new();
    for e in events {
        assert_eq!(
            meter.ingest(e.as_bytes()),
            billing_core::Admission::Accepted,
            "{e}"
        );
    }
    let rated = billing_core::rating::rate_all(
        &book,
        Period::month("2026-11", book.timezone).unwrap(),
        &meter,
        None,
    )
    .unwrap();
    let invoices: Vec<_> = rated.into_iter().map(|r| r.invoice).collect();
    let instance = serde_json::to_value(&invoices).unwrap();
    let components: Vec<&str> = invoices[0]
        .lines
        .iter()
        .map(|l| l.component.as_str())
        .collect();
    for c in [
        "package",
        "subscription",
        "sla_compensation",
        "spot_interrupted",
        "state:stopped",
    ] {
        assert!(components.contains(&c), "{c} missing from {components:?}");
    }
    let v = schema("invoice");
    let errors: Vec<String> = v.iter_errors(&instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{instance:#}");
}

#[test]
fn invoices_the_core_produces_with_part_3_lines_match_the_invoice_schema() {
    // Section 19 regions (`region` null and named), 15 `increment`, 17 `subscription_refund`
    // (with `refund`) and 20 `charge` (no sku, unit `charge`).
    let book = PriceBook::from_toml(
        r#"
currency = "CNY"
timezone = "UTC"
[skus.g]
rate_per_hour = "36.00"
increment_seconds = 600
[regions.r]
currency = "USD"
timezone = "UTC"
[regions.r.skus.g]
rate_per_hour = "3.00"
[[subscriptions]]
account = "acme"
id = "y"
sku = "g"
quantity = "1"
cycle = "year"
start = "2026-01-01T00:00:00Z"
cycles = 1
price = "365.00"
end = "2026-11-11T00:00:00Z"
refund = "prorata"
[[charges]]
account = "acme"
id = "c"
description = "setup"
region = "r"
amount = "5.00"
at = "2026-11-02T00:00:00Z"
"#,
    )
    .unwrap();
    let usage = r#"{"specversion":"1.0","id":"u1","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L1","resource":"g0","sku":"g","start":"2026-11-20T10:00:00Z","end":"2026-11-20T10:01:00Z"}}"#;
    let mut meter = billing_core::meter::Meter::new();
    meter.ingest(usage.as_bytes());
    let month = billing_core::rating::rate_month(&book, "2026-11", &meter, None).unwrap();
    let invoices: Vec<_> = month.rated.into_iter().map(|r| r.invoice).collect();
    let components: Vec<&str> = invoices
        .iter()
        .flat_map(|i| i.lines.iter().map(|l| l.component.as_str()))
        .collect();
    for c in ["increment", "subscription_refund", "charge"] {
        assert!(components.contains(&c), "{c} missing from {components:?}");
    }
    let instance = serde_json::to_value(&invoices).unwrap();
    assert_eq!(instance[0]["region"], Value::Null);
    assert_eq!(instance[1]["region"], "r");
    let v = schema("invoice");
    let errors: Vec<String> = v.iter_errors(&instance).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{instance:#}");
    let back: Vec<billing_core::Invoice> = serde_json::from_value(instance).unwrap();
    assert_eq!(back, invoices);
}
