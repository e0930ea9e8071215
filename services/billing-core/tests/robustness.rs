//! The decoder never panics: random bytes and mutated valid events always come back as an
//! event or a rejection with a reason and a detail.

use billing_core::event::{RejectReason, decode};
use billing_core::meter::{Admission, Meter};
use proptest::prelude::*;

const VALID: [&str; 3] = [
    r#"{"specversion":"1.0","id":"hb-000042","source":"node/gz-a-017","type":"gpu.usage","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","class":"on_demand","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:30Z","quantity":"1"}}"#,
    r#"{"specversion":"1.0","id":"nx-77","source":"gw/gz-a","type":"net.egress","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","dest":"internet","bytes":123456789}}"#,
    r#"{"specversion":"1.0","id":"b1","source":"node/3","type":"gpu.usage","subject":"beta","data":{"lease":"L3","resource":"vgpu-a","sku":"vgpu.t4-quarter","start":"2026-11-10T09:00:00.25+08:00","end":"2026-11-10T10:00:00+08:00","quantity":"0.25"}}"#,
];

fn check(bytes: &[u8]) {
    match decode(bytes) {
        Ok(e) => assert!(!e.id.is_empty() && !e.source.is_empty() && !e.subject.is_empty()),
        Err(r) => {
            assert!(RejectReason::ALL.contains(&r.reason));
            assert!(
                !r.detail.is_empty(),
                "rejection {:?} without detail",
                r.reason
            );
        }
    }
    // The meter classifies every record one way or the other, never panicking either.
    let mut m = Meter::new();
    let first = m.ingest(bytes);
    let again = m.ingest(bytes);
    if first == Admission::Accepted {
        assert_eq!(again, Admission::Duplicate);
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    Insert(prop::sample::Index, u8),
    Delete(prop::sample::Index),
    Splice(prop::sample::Index, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let tokens = prop::sample::select(
        &[
            "null",
            "-1",
            "1e400",
            "\"\"",
            "{}",
            "[]",
            "\"\\ud800\"",
            "\"\\u0000\"",
            "0.0000000000000000000000000000001",
            "99999999999999999999999999999",
            "\"2026-02-30T00:00:00Z\"",
            ",",
            "\"",
            ":",
            "true",
            "\"spot\"",
        ][..],
    );
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
        (any::<prop::sample::Index>(), tokens).prop_map(|(i, t)| Mutation::Splice(i, t)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match m {
        Mutation::Flip(i, b) => {
            let i = i.index(bytes.len());
            bytes[i] ^= b | 1;
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::Insert(i, b) => bytes.insert(i.index(bytes.len()), *b),
        Mutation::Delete(i) => {
            bytes.remove(i.index(bytes.len()));
        }
        Mutation::Splice(i, t) => {
            let i = i.index(bytes.len());
            bytes.splice(i..i, t.bytes());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes);
    }

    #[test]
    fn mutated_valid_events_never_panic(which in 0..3usize, muts in prop::collection::vec(mutation(), 1..6)) {
        let mut bytes = VALID[which].as_bytes().to_vec();
        for m in &muts {
            apply(&mut bytes, m);
        }
        check(&bytes);
    }

    #[test]
    fn any_json_value_in_any_field_never_panics(
        which in 0..3usize,
        field in prop::sample::select(&["specversion", "id", "source", "type", "subject", "time", "data", "data.lease", "data.resource", "data.sku", "data.class", "data.start", "data.end", "data.quantity", "data.dest", "data.bytes"][..]),
        value in prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            "[ -~]{0,300}".prop_map(serde_json::Value::from),
            Just(serde_json::json!({"a": [1, {"b": null}]})),
            Just(serde_json::json!([1, 2, 3])),
        ],
    ) {
        let mut v: serde_json::Value = serde_json::from_str(VALID[which]).unwrap();
        match field.strip_prefix("data.") {
            Some(f) => v["data"][f] = value,
            None => v[field] = value,
        }
        check(v.to_string().as_bytes());
    }
}

#[test]
fn an_array_in_place_of_an_object_is_never_read_positionally() {
    let positional = r#"["1.0","id","src","gpu.usage","acme",null]"#;
    assert_eq!(
        decode(positional.as_bytes()).unwrap_err().reason,
        RejectReason::MalformedJson
    );
    let data_array = VALID[0].replace(
        r#"{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","class":"on_demand","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:30Z","quantity":"1"}"#,
        r#"["l-9","GPU-5f1c","gpu.h100-80g","on_demand","2026-11-03T10:00:00Z","2026-11-03T10:00:30Z","1"]"#,
    );
    assert_ne!(data_array, VALID[0]);
    assert!(decode(data_array.as_bytes()).is_err());
}

#[test]
fn a_repeated_member_is_malformed_not_last_wins() {
    let twice = VALID[0].replace(r#""quantity":"1""#, r#""quantity":"1","quantity":"9""#);
    assert_eq!(
        decode(twice.as_bytes()).unwrap_err().reason,
        RejectReason::MalformedJson
    );
}
