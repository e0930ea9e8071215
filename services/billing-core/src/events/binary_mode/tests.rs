//! Tests of `binary_mode.rs`.

use super::*;
use crate::events::event::decode_any;

fn http<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
    pairs.iter().map(|(n, v)| (*n, v.as_bytes()))
}

const USAGE_DATA: &str = r#"{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","start":"2026-11-03T10:00:00Z","end":"2026-11-03T12:00:00Z","quantity":"1"}"#;

const HEADERS: [(&str, &str); 7] = [
    ("content-type", "application/json"),
    ("ce-specversion", "1.0"),
    ("ce-id", "hb-000042"),
    ("ce-source", "node%2Fgz-a-017"),
    ("ce-type", "gpu.usage"),
    ("ce-subject", "acme"),
    ("ce-time", "2026-11-03T10:00:30Z"),
];

#[test]
fn percent_encoded_header_values_decode_once_as_the_http_binding_says() {
    assert_eq!(decode_http_value(b"node%2F1").unwrap(), "node/1");
    assert_eq!(decode_http_value(b"node/1").unwrap(), "node/1");
    // The spec's own example, and lower-case hex.
    assert_eq!(
        decode_http_value(b"Euro%20%E2%82%AC%20%F0%9F%98%80").unwrap(),
        "Euro \u{20AC} \u{1F600}"
    );
    assert_eq!(decode_http_value(b"%e2%82%ac").unwrap(), "\u{20AC}");
    // One round only: %2541 is "%41", not "A".
    assert_eq!(decode_http_value(b"%2541").unwrap(), "%41");
    // Raw UTF-8 that should have been encoded is still read.
    assert_eq!(
        decode_http_value("gz-a \u{20AC}".as_bytes()).unwrap(),
        "gz-a \u{20AC}"
    );
}

#[test]
fn bad_percent_encoding_and_invalid_utf8_are_refused() {
    // An overlong encoding of a space: the spec says it MUST be rejected.
    assert!(decode_http_value(b"%C0%A0").is_err());
    assert!(decode_http_value(b"%FF").is_err());
    assert!(decode_http_value(b"100%").is_err());
    assert!(decode_http_value(b"%2").is_err());
    assert!(decode_http_value(b"%G1").is_err());
}

#[test]
fn quoted_string_header_values_are_unquoted_before_percent_decoding() {
    assert_eq!(decode_http_value(br#""node 1""#).unwrap(), "node 1");
    assert_eq!(decode_http_value(br#""a\"b\\c""#).unwrap(), r#"a"b\c"#);
    assert_eq!(decode_http_value(br#""node%2F1""#).unwrap(), "node/1");
    assert!(decode_http_value(br#""not closed"#).is_err());
    assert!(decode_http_value(br#""a"b"#).is_err());
}

#[test]
fn binary_mode_is_ce_specversion_without_a_cloudevents_content_type() {
    assert!(is_binary(Binding::Http, http(&HEADERS)));
    // Structured and batch modes may repeat attributes in headers: their body counts.
    let structured = [
        (
            "content-type",
            "application/cloudevents+json; charset=utf-8",
        ),
        ("ce-specversion", "1.0"),
    ];
    assert!(!is_binary(Binding::Http, http(&structured)));
    let batch = [
        ("Content-Type", "Application/CloudEvents-Batch+JSON"),
        ("CE-SpecVersion", "1.0"),
    ];
    assert!(!is_binary(Binding::Http, http(&batch)));
    assert!(!is_binary(
        Binding::Http,
        http(&[("content-type", "application/json")])
    ));
    // Each binding has its own prefix.
    assert!(!is_binary(Binding::Kafka, http(&HEADERS)));
    assert!(is_binary(
        Binding::Kafka,
        http(&[("ce_specversion", "1.0")])
    ));
}

#[test]
fn json_media_types() {
    for ct in [
        "application/json",
        "Application/JSON; charset=utf-8",
        "application/vnd.gpubill.usage+json",
    ] {
        assert!(is_json(ct), "{ct}");
    }
    for ct in [
        "text/plain",
        "application/octet-stream",
        "+json",
        "application/jsonx",
        "text/json",
    ] {
        assert!(!is_json(ct), "{ct}");
    }
}

#[test]
fn a_binary_event_becomes_the_structured_record_with_its_attributes_first() {
    let env = read_headers(Binding::Http, http(&HEADERS)).unwrap();
    assert_eq!(env.content_type.as_deref(), Some("application/json"));
    let record = to_structured(
        &env.attributes,
        env.content_type.as_deref(),
        USAGE_DATA.as_bytes(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(record).unwrap(),
        format!(
            r#"{{"specversion":"1.0","id":"hb-000042","source":"node/gz-a-017","type":"gpu.usage","subject":"acme","time":"2026-11-03T10:00:30Z","datacontenttype":"application/json","data":{USAGE_DATA}}}"#
        )
    );
}

#[test]
fn binary_and_structured_deliveries_of_one_event_are_duplicates() {
    let binary = record(Binding::Http, http(&HEADERS), USAGE_DATA.as_bytes());
    // The same event as an agent sends it structured: other member order, whitespace,
    // another spelling of the same instant, an extension, no datacontenttype.
    let structured = format!(
        r#"{{ "data": {USAGE_DATA}, "time": "2026-11-03T18:00:30+08:00", "subject": "acme", "zone": "gz-a",
           "type": "gpu.usage", "source": "node/gz-a-017", "id": "hb-000042", "specversion": "1.0" }}"#
    );
    let (a, b) = (
        decode_any(&binary).unwrap(),
        decode_any(structured.as_bytes()).unwrap(),
    );
    assert_eq!((&a.source, &a.id), (&b.source, &b.id));
    assert_eq!(a.fingerprint(), b.fingerprint());
    // A change of what is billed is a conflict, whatever the mode.
    let more = record(
        Binding::Http,
        http(&HEADERS),
        USAGE_DATA
            .replace(r#""quantity":"1""#, r#""quantity":"2""#)
            .as_bytes(),
    );
    assert_ne!(decode_any(&more).unwrap().fingerprint(), b.fingerprint());
}

#[test]
fn kafka_headers_are_utf8_as_they_are() {
    let headers = [
        ("content-type", "application/json"),
        ("ce_specversion", "1.0"),
        ("ce_id", "hb-000042"),
        ("ce_source", "node%2Fgz-a-017"),
        ("ce_type", "gpu.usage"),
        ("ce_subject", "acme"),
    ];
    let stored = record(Binding::Kafka, http(&headers), USAGE_DATA.as_bytes());
    let e = decode_any(&stored).unwrap();
    // No percent-decoding in the Kafka binding.
    assert_eq!(e.source, "node%2Fgz-a-017");
    let bad = [
        ("ce_specversion", b"1.0".as_slice()),
        ("ce_id", b"\xff".as_slice()),
    ];
    let r = decode_any(&record(Binding::Kafka, bad.iter().copied(), b"{}")).unwrap_err();
    assert_eq!(r.reason, RejectReason::MalformedJson, "{r}");
    assert_eq!(r.detail, "binary mode: Kafka header ce_id: not UTF-8");
}

/// Decodes the record stored for HTTP `headers` with `body`.
fn decoded(headers: &[(&str, &str)], body: &str) -> Result<String, Rejection> {
    decode_any(&record(Binding::Http, http(headers), body.as_bytes())).map(|e| e.id.into_owned())
}

fn without(name: &str) -> Vec<(&'static str, &'static str)> {
    HEADERS
        .iter()
        .copied()
        .filter(|(n, _)| *n != name)
        .collect()
}

fn with(name: &'static str, value: &'static str) -> Vec<(&'static str, &'static str)> {
    let mut h = without(name);
    h.push((name, value));
    h
}

#[test]
fn missing_or_bad_attributes_are_refused_as_in_structured_mode() {
    assert_eq!(decoded(&HEADERS, USAGE_DATA).unwrap(), "hb-000042");
    let r = decoded(&without("ce-id"), USAGE_DATA).unwrap_err();
    assert_eq!(
        (r.reason, r.source.as_deref()),
        (RejectReason::MissingId, Some("node/gz-a-017"))
    );
    let r = decoded(&with("ce-time", "yesterday"), USAGE_DATA).unwrap_err();
    assert_eq!(r.reason, RejectReason::BadTime);
    assert_eq!(r.id.as_deref(), Some("hb-000042"));
    let r = decoded(&with("ce-specversion", "0.3"), USAGE_DATA).unwrap_err();
    assert_eq!(r.reason, RejectReason::BadSpecversion);
    let r = decoded(&with("ce-subject", "acme%20corp"), USAGE_DATA).unwrap_err();
    assert_eq!(r.reason, RejectReason::BadSubject);
}

#[test]
fn data_that_is_not_json_is_refused_with_a_reason_and_the_identity() {
    let r = decoded(&with("content-type", "text/plain"), "8 GPUs for an hour").unwrap_err();
    assert_eq!(r.reason, RejectReason::WrongType, "{r}");
    assert_eq!(
        r.detail,
        "binary mode: content-type \"text/plain\" is not JSON (application/json or a +json type); gpubill's events carry JSON data"
    );
    assert_eq!(
        (r.source.as_deref(), r.id.as_deref()),
        (Some("node/gz-a-017"), Some("hb-000042"))
    );
    let r = decoded(&HEADERS, "{\"lease\": ").unwrap_err();
    assert_eq!(r.reason, RejectReason::MalformedJson, "{r}");
    assert!(
        r.detail
            .starts_with("binary mode: the body (content-type application/json) is not JSON: "),
        "{r}"
    );
    assert_eq!(r.id.as_deref(), Some("hb-000042"));
    // No content type: JSON is implied, and checked.
    assert_eq!(
        decoded(&without("content-type"), USAGE_DATA).unwrap(),
        "hb-000042"
    );
    let r = decoded(&without("content-type"), "lease=l-9").unwrap_err();
    assert_eq!(r.reason, RejectReason::MalformedJson, "{r}");
    // JSON, but not an object: as a structured event's data.
    let r = decoded(&HEADERS, "[1, 2]").unwrap_err();
    assert_eq!(r.reason, RejectReason::WrongType, "{r}");
    // No body, no data.
    let r = decoded(&HEADERS, "").unwrap_err();
    assert_eq!(
        (r.reason, r.detail.as_str()),
        (RejectReason::MissingField, "data is missing")
    );
}

#[test]
fn a_body_cannot_add_members_to_the_record() {
    let body = format!(r#"{USAGE_DATA}, "subject": "victim""#);
    let r = decoded(&HEADERS, &body).unwrap_err();
    assert_eq!(r.reason, RejectReason::MalformedJson, "{r}");
    // Attribute values are escaped, whatever they hold.
    let quoted = with("ce-id", r#"a%22%2C%22subject%22%3A%22victim%5C"#);
    assert_eq!(
        decoded(&quoted, USAGE_DATA).unwrap(),
        r#"a","subject":"victim\"#
    );
}

#[test]
fn envelope_mistakes_are_malformed() {
    let cases: [(Vec<(&str, &str)>, &str); 6] = [
        (
            with("ce-source", "node%2"),
            "binary mode: HTTP header ce-source: a % not followed by two hex digits",
        ),
        (
            with("ce-source", "%C0%A0"),
            "binary mode: HTTP header ce-source: not UTF-8 once percent-decoded",
        ),
        (
            [HEADERS.to_vec(), vec![("ce-id", "hb-2")]].concat(),
            "binary mode: attribute id appears twice",
        ),
        (
            with("ce-datacontenttype", "application/json"),
            "binary mode: datacontenttype must not be an attribute header: content-type says it",
        ),
        (
            with("ce-data", "{}"),
            "binary mode: data is the body of a binary-mode message, not an attribute header",
        ),
        (
            with("ce-node_id", "n1"),
            "binary mode: \"node_id\" is not a CloudEvents attribute name (a-z, 0-9)",
        ),
    ];
    for (headers, detail) in cases {
        let r = decoded(&headers, USAGE_DATA).unwrap_err();
        assert_eq!(
            (r.reason, r.detail.as_str()),
            (RejectReason::MalformedJson, detail)
        );
    }
    let twice = [HEADERS.to_vec(), vec![("content-type", "text/plain")]].concat();
    let r = decoded(&twice, USAGE_DATA).unwrap_err();
    assert_eq!(
        r.detail,
        "binary mode: HTTP header content-type appears twice"
    );
    // The identity still comes with it, from the headers that decode.
    assert_eq!(
        (r.source.as_deref(), r.id.as_deref()),
        (Some("node/gz-a-017"), Some("hb-000042"))
    );
}

#[test]
fn a_refused_message_is_kept_as_received() {
    let headers = with("content-type", "text/plain");
    let stored = record(Binding::Http, http(&headers), b"8 GPUs\0");
    let text = String::from_utf8(stored.clone()).unwrap();
    let head = "gpubill-binary-mode-refused\n{\"rejection\":{\"reason\":\"wrong_type\"";
    assert!(text.starts_with(head), "{text}");
    assert!(
        text.contains(r#"["ce-source","node%2Fgz-a-017"]"#),
        "{text}"
    );
    // A NUL byte of the body is kept escaped (PostgreSQL's text refuses NUL).
    assert!(text.ends_with(r#""body":"8 GPUs\u0000"}"#), "{text}");
    assert!(!stored.contains(&0));
    // Any other record is not a stand-in.
    assert!(refused(USAGE_DATA.as_bytes()).is_none());
    assert!(refused(b"gpubill-binary-mode-refused\nnot json").is_none());
}
