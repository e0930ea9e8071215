//! The decoder never panics: random bytes and mutated valid events always come back as an
//! event or a rejection with a reason and a detail.

use billing_core::event::{RejectReason, decode};
use billing_core::meter::{Admission, Meter};
use proptest::prelude::*;

const VALID: [&str; 7] = [
    r#"{"specversion":"1.0","id":"hb-000042","source":"node/gz-a-017","type":"gpu.usage","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","class":"on_demand","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:30Z","quantity":"1"}}"#,
    r#"{"specversion":"1.0","id":"nx-77","source":"gw/gz-a","type":"net.egress","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","dest":"internet","bytes":123456789}}"#,
    r#"{"specversion":"1.0","id":"b1","source":"node/3","type":"gpu.usage","subject":"beta","data":{"lease":"L3","resource":"vgpu-a","sku":"vgpu.t4-quarter","start":"2026-11-10T09:00:00.25+08:00","end":"2026-11-10T10:00:00+08:00","quantity":"0.25"}}"#,
    // Part 2: the rental events.
    r#"{"specversion":"1.0","id":"s-1","source":"ctl/1","type":"lease.state","subject":"acme","data":{"lease":"l-9","state":"stopped","at":"2026-11-03T10:00:00.5Z"}}"#,
    r#"{"specversion":"1.0","id":"p-1","source":"mkt","type":"spot.price","subject":"gz-a","data":{"sku":"gpu.h100","price_per_hour":"9.60","from":"2026-11-03T10:00:00Z"}}"#,
    r#"{"specversion":"1.0","id":"f-1","source":"mon","type":"node.fault","subject":"platform","data":{"node":"node/7","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:30:00Z"}}"#,
    r#"{"specversion":"1.0","id":"c-1","source":"gw","type":"net.counter","subject":"acme","data":{"lease":"l-9","interface":"eth0","dest":"internet","bytes_total":42,"at":"2026-11-03T10:00:00Z"}}"#,
];

fn check(bytes: &[u8]) {
    match billing_core::event::decode_any(bytes) {
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
    fn mutated_valid_events_never_panic(which in 0..VALID.len(), muts in prop::collection::vec(mutation(), 1..6)) {
        let mut bytes = VALID[which].as_bytes().to_vec();
        for m in &muts {
            apply(&mut bytes, m);
        }
        check(&bytes);
    }

    #[test]
    fn any_json_value_in_any_field_never_panics(
        which in 0..VALID.len(),
        field in prop::sample::select(&["specversion", "id", "source", "type", "subject", "time", "data", "data.lease", "data.resource", "data.sku", "data.class", "data.start", "data.end", "data.quantity", "data.dest", "data.bytes", "data.state", "data.at", "data.price_per_hour", "data.from", "data.node", "data.interface", "data.bytes_total"][..]),
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

/// The event reader and serde_json agree: whatever serde_json refuses, the reader refuses;
/// whatever the reader accepts, serde_json reads to the same members.
mod differential {
    use billing_core::json::{DATA_MEMBERS, EVENT_MEMBERS, Scalar, read_event};
    use proptest::prelude::*;
    use serde_json::Value;

    fn expected(v: Option<&Value>) -> String {
        let s = match v {
            None => Scalar::Absent,
            Some(Value::Null) => Scalar::Null,
            Some(Value::Bool(_)) => Scalar::Bool,
            Some(Value::String(s)) => Scalar::Str(s.clone().into()),
            Some(Value::Number(n)) if n.is_u64() => Scalar::UInt(n.as_u64().unwrap()),
            Some(Value::Number(n)) if n.is_i64() => Scalar::NegInt(n.as_i64().unwrap()),
            Some(Value::Number(_)) => Scalar::Float,
            Some(_) => Scalar::Compound,
        };
        show(&s)
    }

    fn show(s: &Scalar<'_>) -> String {
        match s {
            Scalar::Str(c) => format!("Str({c:?})"),
            other => format!("{other:?}"),
        }
    }

    /// Compares when serde_json accepts; returns whether the reader accepted.
    fn agree(text: &str) -> Result<(), TestCaseError> {
        let ours = read_event(text);
        let theirs: Result<Value, _> = serde_json::from_str(text);
        match (&ours, &theirs) {
            (Ok(_), Err(e)) => prop_assert!(
                false,
                "reader accepted what serde_json refuses ({e}): {text:?}"
            ),
            (Ok(o), Ok(v)) => {
                let obj = v.as_object().expect("accepted non-object");
                for (i, name) in EVENT_MEMBERS.iter().enumerate() {
                    prop_assert_eq!(
                        show(&o.attrs[i]),
                        expected(obj.get(*name)),
                        "{} in {:?}",
                        name,
                        text
                    );
                }
                match (obj.get("data"), &o.data) {
                    (None | Some(Value::Null), None) => {}
                    (Some(Value::Object(d)), Some(Ok(data))) => {
                        for (i, name) in DATA_MEMBERS.iter().enumerate() {
                            prop_assert_eq!(
                                show(&data[i]),
                                expected(d.get(*name)),
                                "data.{} in {:?}",
                                name,
                                text
                            );
                        }
                    }
                    (Some(_), Some(Err(()))) => {}
                    (a, b) => prop_assert!(false, "data differs: {a:?} vs {b:?} in {text:?}"),
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e30f64..1e30).prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            "[\"\\\\\u{0}-\u{1f}a-z]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(
                        &[
                            "id", "source", "time", "data", "sku", "bytes", "x", "quantity"
                        ][..]
                    )
                    .prop_map(String::from),
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn generated_objects_read_the_same(v in json_value(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            if v.is_object() {
                prop_assert!(read_event(&text).is_ok(), "refused a valid object {:?}", text);
            }
            agree(&text)?;
        }

        #[test]
        fn mutated_objects_never_pass_where_serde_json_fails(v in json_value(), at in any::<prop::sample::Index>(), byte in prop::sample::select(&[b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'-', b'0', b'e', b'.', b' ', 0x01, b'u', b'n'][..]), delete in any::<bool>()) {
            let mut bytes = v.to_string().into_bytes();
            let i = at.index(bytes.len() + 1);
            if delete && i < bytes.len() { bytes.remove(i); } else { bytes.insert(i.min(bytes.len()), byte); }
            if let Ok(text) = String::from_utf8(bytes) {
                agree(&text)?;
            }
        }
    }
}

mod blocks {
    use billing_core::meter::Meter;
    use proptest::prelude::*;

    fn event(id: u8, start: u8, q: u8) -> String {
        format!(
            r#"{{"specversion":"1.0","id":"e{id}","source":"n","type":"gpu.usage","subject":"a{}","data":{{"lease":"L","resource":"r{}","sku":"gpu","start":"2026-11-03T10:{:02}:00Z","end":"2026-11-03T11:00:00Z","quantity":"{}"}}}}"#,
            id % 3,
            id % 4,
            start % 60,
            q % 3 + 1
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Metering in blocks gives exactly what metering one record at a time gives:
        /// the same admissions (duplicates and conflicts inside a block included) and ledger.
        #[test]
        fn ingest_block_equals_one_at_a_time(
            specs in prop::collection::vec((0..12u8, any::<u8>(), any::<u8>(), any::<bool>()), 0..80),
            block in 1..20usize,
        ) {
            let records: Vec<String> = specs.iter().map(|&(id, s, q, garbage)| if garbage && s % 7 == 0 { "nope".to_string() } else { event(id, s, q) }).collect();
            let mut one = Meter::new();
            let singles: Vec<_> = records.iter().map(|r| one.ingest(r.as_bytes())).collect();
            let mut many = Meter::new();
            let mut blocked = Vec::new();
            for chunk in records.chunks(block) {
                let refs: Vec<&[u8]> = chunk.iter().map(|r| r.as_bytes()).collect();
                blocked.extend(many.ingest_block(&refs));
            }
            prop_assert_eq!(&blocked, &singles);
            let dump = |m: &Meter| m.accounts().map(|(a, l)| (a.to_string(), format!("{:?}", l.usage_sorted()))).collect::<Vec<_>>();
            prop_assert_eq!(dump(&many), dump(&one));
        }
    }
}
