//! Tests of `event.rs`.

use super::*;

const USAGE: &str = r#"{"specversion":"1.0","id":"hb-000042","source":"node/gz-a-017","type":"gpu.usage","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","class":"on_demand","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:30Z","quantity":"1"}}"#;
const EGRESS: &str = r#"{"specversion":"1.0","id":"nx-77","source":"gw/gz-a","type":"net.egress","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","dest":"internet","bytes":123456789}}"#;

fn reason_of(text: &str) -> RejectReason {
    decode(text.as_bytes()).expect_err(text).reason
}

fn usage_with(field: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(USAGE).unwrap();
    let patch: serde_json::Value = serde_json::from_str(value).unwrap();
    match field.strip_prefix("data.") {
        Some(f) => v["data"][f] = patch,
        None => v[field] = patch,
    }
    v.to_string()
}

#[test]
fn decodes_the_spec_examples() {
    let e = decode(USAGE.as_bytes()).unwrap();
    assert_eq!(e.subject, "acme");
    let EventData::Usage(u) = &e.data else {
        panic!()
    };
    assert_eq!(u.seconds().1 - u.seconds().0, 30);
    assert_eq!(u.quantity, Decimal::ONE);
    let e = decode(EGRESS.as_bytes()).unwrap();
    let EventData::Egress(x) = &e.data else {
        panic!()
    };
    assert_eq!(x.bytes, 123_456_789);
    assert_eq!(x.dest, "internet");
}

#[test]
fn defaults_class_on_demand_and_quantity_one() {
    let mut v: serde_json::Value = serde_json::from_str(USAGE).unwrap();
    v["data"].as_object_mut().unwrap().remove("class");
    v["data"].as_object_mut().unwrap().remove("quantity");
    let text = v.to_string();
    let EventData::Usage(u) = decode(text.as_bytes()).unwrap().data else {
        panic!()
    };
    assert_eq!((u.class, u.quantity), (Class::OnDemand, Decimal::ONE));
}

#[test]
fn every_validation_rule_of_section_1_has_its_reason() {
    use RejectReason::*;
    let cases: Vec<(String, RejectReason)> = vec![
        (usage_with("specversion", r#""0.3""#), BadSpecversion),
        (usage_with("type", r#""gpu.temperature""#), UnknownType),
        (usage_with("id", "null"), MissingId),
        (usage_with("id", r#""""#), MissingId),
        (usage_with("source", "null"), MissingSource),
        (usage_with("subject", "null"), MissingSubject),
        (usage_with("data.start", r#""03/11/2026""#), BadTime),
        (usage_with("time", r#""noon""#), BadTime),
        (
            usage_with("data.end", r#""2026-11-03T10:00:00Z""#),
            EmptyInterval,
        ),
        (
            usage_with("data.end", r#""2026-11-02T10:00:00Z""#),
            EmptyInterval,
        ),
        (
            usage_with("data.end", r#""2026-11-04T10:00:00.5Z""#),
            IntervalTooLong,
        ),
        (usage_with("data.quantity", r#""0""#), BadQuantity),
        (usage_with("data.quantity", r#""-1""#), BadQuantity),
        (usage_with("data.quantity", r#""10000.01""#), BadQuantity),
        (usage_with("data.quantity", r#""lots""#), BadQuantity),
        (usage_with("data.quantity", "0.25"), BadQuantity),
        (usage_with("data.class", r#""preemptible""#), BadClass),
        (
            usage_with("data.sku", &format!("\"{}\"", "x".repeat(257))),
            StringTooLong,
        ),
        (usage_with("id", "42"), WrongType),
        (usage_with("data.lease", "null"), MissingField),
        (usage_with("data", "null"), MissingField),
        (EGRESS.replace("123456789", "-5"), BadBytes),
        (EGRESS.replace("123456789", "1.5"), BadBytes),
        (
            EGRESS.replace("\"time\":\"2026-11-03T10:00:30Z\",", ""),
            MissingField,
        ),
        ("{not json".to_string(), MalformedJson),
        ("[1,2]".to_string(), MalformedJson),
        (
            format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000)),
            RecordTooLarge,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(reason_of(&text), want, "{}", &text[..text.len().min(200)]);
    }
}

#[test]
fn subjects_follow_the_account_id_grammar() {
    // Issue 14, finding 8: these became billable accounts of their own.
    for bad in [r#""' OR 1=1; --""#, r#""tenant а""#, r#""a/b""#] {
        let r = decode(usage_with("subject", bad).as_bytes()).unwrap_err();
        assert_eq!(r.reason, RejectReason::BadSubject, "{bad}");
        assert_eq!(r.id.as_deref(), Some("hb-000042"));
    }
    // A NUL (or any control character) is refused in every string, the subject too.
    for (field, bad) in [
        ("subject", r#""tenant-a\u0000""#),
        ("source", r#""node\u0000/1""#),
        ("data.lease", r#""l\u001f9""#),
    ] {
        let r = decode(usage_with(field, bad).as_bytes()).unwrap_err();
        assert_eq!(r.reason, RejectReason::ControlCharacter, "{field} {bad}");
    }
    let ok = usage_with("subject", r#""Tenant_A.prod-01""#);
    assert_eq!(decode(ok.as_bytes()).unwrap().subject, "Tenant_A.prod-01");
}

#[test]
fn times_outside_2000_to_2100_are_out_of_range() {
    // Issue 14, finding 2: an event from 1969 belonged to no period.
    for (field, value) in [
        ("data.start", r#""1969-12-31T23:59:00Z""#),
        ("data.start", r#""1999-12-31T23:59:59Z""#),
        ("data.end", r#""2100-01-01T00:00:01Z""#),
        ("time", r#""9999-01-01T00:00:00Z""#),
    ] {
        let r = decode(usage_with(field, value).as_bytes()).unwrap_err();
        assert_eq!(r.reason, RejectReason::TimeOutOfRange, "{field} {value}");
    }
    let edge = usage_with("data.start", r#""2000-01-01T00:00:00Z""#)
        .replace("2026-11-03T10:00:30Z", "2000-01-01T00:00:30Z");
    assert!(decode(edge.as_bytes()).is_ok());
}

#[test]
fn quantities_follow_the_schema_grammar_exactly() {
    // Issue 14, finding 10.
    for bad in [
        r#""1_000""#,
        r#""1e3""#,
        r#""0x10""#,
        r#""5.""#,
        r#""0.1000000000000000000000000000001""#,
    ] {
        let r = decode(usage_with("data.quantity", bad).as_bytes()).unwrap_err();
        assert_eq!(r.reason, RejectReason::BadQuantity, "{bad}");
    }
    let q = |text: &str| match decode(usage_with("data.quantity", text).as_bytes())
        .unwrap()
        .data
    {
        EventData::Usage(u) => u.quantity,
        _ => unreachable!(),
    };
    assert_eq!(q(r#"" 0.25 ""#).to_string(), "0.25");
    assert_eq!(q(r#""0.000000000000001""#).to_string(), "0.000000000000001");
    // Distinct texts that differ past the old rounding are now distinct or refused, never
    // silently equal.
    let (a, b) = (
        usage_with("data.quantity", r#""0.1""#),
        usage_with("data.quantity", r#""0.100000000000001""#),
    );
    let fp = |t: &str| decode(t.as_bytes()).unwrap().fingerprint();
    assert_ne!(fp(&a), fp(&b));
}

#[test]
fn a_leap_second_bills_and_fingerprints_as_the_next_minute() {
    // Issue 14, finding 12.
    let leap = usage_with("data.end", r#""2026-11-03T10:00:60Z""#);
    let next = usage_with("data.end", r#""2026-11-03T10:01:00Z""#);
    let (a, b) = (
        decode(leap.as_bytes()).unwrap(),
        decode(next.as_bytes()).unwrap(),
    );
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_eq!(a.end_secs(), b.end_secs());
}

#[test]
fn events_ending_past_the_engines_limit_are_too_early() {
    let e = decode(USAGE.as_bytes()).unwrap();
    let end = e.end_secs();
    assert!(e.clone().ending_by(end).is_ok());
    let r = e.clone().ending_by(end - 1).unwrap_err();
    assert_eq!(r.reason, RejectReason::TooEarly);
    assert_eq!(r.source.as_deref(), Some("node/gz-a-017"));
    assert!(e.clone().ending_after(end).is_ok());
    let r = e.ending_after(end + 1).unwrap_err();
    assert_eq!(r.reason, RejectReason::TooLate);
}

#[test]
fn an_oversize_record_is_stored_as_a_bounded_stand_in_rejected_alike() {
    // Issue 14, finding 5.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(10 << 20));
    let stored = stored_form(big.as_bytes());
    assert!(stored.len() < 1200, "{}", stored.len());
    let (a, b) = (
        decode(big.as_bytes()).unwrap_err(),
        decode(&stored).unwrap_err(),
    );
    assert_eq!(a, b);
    assert_eq!(a.reason, RejectReason::RecordTooLarge);
    assert!(
        a.detail.contains("10485770 bytes") && a.detail.contains("sha256 "),
        "{}",
        a.detail
    );
    assert_eq!(
        kept_payload(&stored),
        &big.as_bytes()[..OVERSIZE_KEPT_BYTES]
    );
    assert_eq!(kept_payload(big.as_bytes()).len(), OVERSIZE_KEPT_BYTES);
    assert_eq!(stored_form(USAGE.as_bytes()).as_ref(), USAGE.as_bytes());
    assert_eq!(kept_payload(USAGE.as_bytes()), USAGE.as_bytes());
}

#[test]
fn an_interval_of_exactly_one_day_is_accepted() {
    let ok = usage_with("data.end", r#""2026-11-04T10:00:00Z""#);
    assert!(decode(ok.as_bytes()).is_ok());
}

#[test]
fn string_of_exactly_256_bytes_is_accepted() {
    let ok = usage_with("data.sku", &format!("\"{}\"", "x".repeat(256)));
    assert!(decode(ok.as_bytes()).is_ok());
}

#[test]
fn rejections_carry_the_identity_when_readable() {
    let r = decode(usage_with("data.quantity", r#""0""#).as_bytes()).unwrap_err();
    assert_eq!(r.source.as_deref(), Some("node/gz-a-017"));
    assert_eq!(r.id.as_deref(), Some("hb-000042"));
    assert!(r.detail.contains("quantity"), "{}", r.detail);
}

#[test]
fn fingerprint_ignores_spelling_but_not_meaning() {
    let a = decode(USAGE.as_bytes()).unwrap().fingerprint();
    let respelled = usage_with("data.quantity", r#""1.00""#)
        .replace("2026-11-03T10:00:00Z", "2026-11-03T18:00:00+08:00");
    assert_eq!(decode(respelled.as_bytes()).unwrap().fingerprint(), a);
    let changed = usage_with("data.quantity", r#""2""#);
    assert_ne!(decode(changed.as_bytes()).unwrap().fingerprint(), a);
}
