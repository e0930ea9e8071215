//! The JSON Schemas in `schemas/` accept their valid examples and reject their invalid ones,
//! and the billing core agrees with them on every example.

use billing_core::event::decode_any;
use billing_core::pricebook::PriceBook;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = root().join("schemas").join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// TOML to the JSON model the price-book schema describes (datetimes become strings).
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

/// (file name, raw text) of every example in `schemas/examples/<name>/<kind>`.
fn examples(name: &str, kind: &str) -> Vec<(String, String)> {
    let dir = root().join("schemas/examples").join(name).join(kind);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p: PathBuf| (file_name(&p), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no examples in {}", dir.display());
    out
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

#[test]
fn event_schemas_and_the_decoder_agree_on_every_example() {
    for name in [
        "gpu.usage",
        "net.egress",
        "lease.state",
        "spot.price",
        "node.fault",
        "net.counter",
    ] {
        let v = schema(name);
        for (file, text) in examples(name, "valid") {
            let instance: Value = serde_json::from_str(&text).unwrap();
            assert!(
                v.is_valid(&instance),
                "{name}/valid/{file}: {:?}",
                errors(&v, &instance)
            );
            assert!(
                decode_any(text.trim().as_bytes()).is_ok(),
                "{name}/valid/{file} rejected by the decoder"
            );
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
fn pricebook_schema_and_the_parser_agree_on_every_example() {
    let v = schema("pricebook");
    for (file, text) in examples("pricebook", "valid") {
        let instance = toml_to_json(text.parse::<toml::Table>().map(toml::Value::Table).unwrap());
        assert!(
            v.is_valid(&instance),
            "pricebook/valid/{file}: {:?}",
            errors(&v, &instance)
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
        assert!(
            !e.key().is_empty(),
            "pricebook/invalid/{file}: error names no key: {e}"
        );
    }
}

#[test]
fn invoice_schema_accepts_valid_and_rejects_invalid_examples() {
    let v = schema("invoice");
    for (file, text) in examples("invoice", "valid") {
        let instance: Value = serde_json::from_str(&text).unwrap();
        assert!(
            v.is_valid(&instance),
            "invoice/valid/{file}: {:?}",
            errors(&v, &instance)
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
fn invoices_the_core_produces_match_the_invoice_schema() {
    use billing_core::meter::Meter;
    use billing_core::period::Period;
    let dir = root().join("tests/fixtures/worked-1");
    let book = PriceBook::from_toml(&std::fs::read_to_string(dir.join("pricebook.toml")).unwrap())
        .unwrap();
    let mut meter = Meter::new();
    for line in std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
    {
        meter.ingest(line.as_bytes());
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
    let v = schema("invoice");
    assert!(v.is_valid(&instance), "{:?}", errors(&v, &instance));
}
