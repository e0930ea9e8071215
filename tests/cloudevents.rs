//! Issue 13: CloudEvents binary content mode next to structured and batch mode, over HTTP
//! (`ce-*` headers, the data as the body) and Kafka (`ce_*` record headers, the data as the
//! value), with what the official CloudEvents Python SDK sends (recorded under
//! `tests/fixtures/cloudevents/` by `make_fixtures.py`). Every mode closes November to exactly
//! the invoices `gpubill rate` makes of the same events in structured mode; a mix of modes
//! with redeliveries across them does too (a redelivery in another mode is a duplicate);
//! binary input that cannot be read is dead-lettered with its reason.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use gpubill_tests::*;
use http_body_util::BodyExt;
use serde_json::Value;
use std::time::Duration;
use tower::ServiceExt;

const PERIOD: &str = "2026-11";

/// One recorded message: its headers, its body (HTTP) or value (Kafka), its key (Kafka).
#[derive(Debug, Clone)]
struct Message {
    headers: Vec<(String, String)>,
    body: String,
    key: String,
}

impl Message {
    /// The message with header `name` set to `value` (added when missing).
    fn with(&self, name: &str, value: &str) -> Message {
        let mut m = self.without(name);
        m.headers.push((name.to_string(), value.to_string()));
        m
    }

    fn without(&self, name: &str) -> Message {
        let mut m = self.clone();
        m.headers.retain(|(n, _)| n != name);
        m
    }

    fn body(&self, body: &str) -> Message {
        Message {
            body: body.to_string(),
            ..self.clone()
        }
    }
}

/// The messages of one fixture file, in the order of make_fixtures.py's events.
fn messages(file: &str) -> Vec<Message> {
    let v: Value = serde_json::from_str(&fixture(&format!("cloudevents/{file}"))).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| Message {
            headers: m["headers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect(),
            body: m
                .get("body")
                .or(m.get("value"))
                .and_then(Value::as_str)
                .unwrap()
                .to_string(),
            key: m["key"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

fn book() -> String {
    fixture("cloudevents/pricebook.toml")
}

/// The six events as structured records (the SDK's structured HTTP bodies): the reference.
fn structured_events() -> Vec<String> {
    messages("http-structured.json")
        .into_iter()
        .map(|m| m.body)
        .collect()
}

/// What `gpubill rate` makes of the six events.
fn expected_invoices() -> Vec<Value> {
    let invoices = offline_invoices(&book(), &structured_events(), PERIOD);
    // Every event counts: both accounts, spot, a stopped volume, egress past the free tier.
    let text = serde_json::to_string(&invoices).unwrap();
    assert_eq!(invoices.len(), 2, "{text}");
    for line in ["spot", "state:stopped", "egress"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    invoices
}

/// Closes November and checks that it issued what `gpubill rate` makes of the events.
async fn closes_like_the_offline_rater(t: &TestApp) {
    let closed = t.close(PERIOD).await;
    let issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, expected_invoices());
}

/// Posts `body` to the ingest route with exactly `headers` (and the ingest token); asserts 200.
async fn post(t: &TestApp, headers: &[(String, String)], body: impl Into<Body>) -> Value {
    let mut req = Request::builder()
        .method("POST")
        .uri("/v1/events")
        .header("authorization", format!("Bearer {INGEST}"));
    for (name, value) in headers {
        req = req.header(name.as_str(), value.as_str());
    }
    let resp = t
        .app
        .clone()
        .oneshot(req.body(body.into()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    assert_eq!(status, StatusCode::OK, "{v}");
    v
}

/// Sends a recorded HTTP message as it is.
async fn send(t: &TestApp, m: &Message) -> Value {
    post(t, &m.headers, m.body.clone()).await
}

/// Sends structured records as one batch (`application/cloudevents-batch+json`).
async fn send_batch(t: &TestApp, records: &[&str]) -> Value {
    let ctype = [(
        "content-type".to_string(),
        "application/cloudevents-batch+json".to_string(),
    )];
    post(t, &ctype, format!("[{}]", records.join(","))).await
}

/// Each event's status in an ingest answer: `accepted`, `duplicate` or the rejection reason.
fn outcomes(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| match r["status"].as_str().unwrap() {
            "rejected" => r["reason"].as_str().unwrap().to_string(),
            s => s.to_string(),
        })
        .collect()
}

async fn ready(db: Db) -> TestApp {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book()).await;
    t
}

async fn assert_no_dead_letters(t: &TestApp) {
    let dead = t.state.store.log().dead_letters(0, 100).await.unwrap();
    assert!(dead.is_empty(), "{dead:?}");
}

// ---- HTTP ------------------------------------------------------------------------------------

/// Structured mode as the SDK sends it (`application/cloudevents+json`, one event a request).
async fn http_structured_mode_from_the_sdk_bills_like_gpubill_rate(db: Db) {
    let t = ready(db).await;
    for m in messages("http-structured.json") {
        assert_eq!(outcomes(&send(&t, &m).await), ["accepted"]);
    }
    assert_no_dead_letters(&t).await;
    closes_like_the_offline_rater(&t).await;
}
on_both!(http_structured_mode_from_the_sdk_bills_like_gpubill_rate);

/// Batch mode: the SDK's structured events in one JSON array.
async fn http_batch_mode_bills_like_gpubill_rate(db: Db) {
    let t = ready(db).await;
    let events = structured_events();
    let records: Vec<&str> = events.iter().map(String::as_str).collect();
    assert_eq!(outcomes(&send_batch(&t, &records).await), ["accepted"; 6]);
    assert_no_dead_letters(&t).await;
    closes_like_the_offline_rater(&t).await;
}
on_both!(http_batch_mode_bills_like_gpubill_rate);

/// Binary mode as the SDK sends it: attributes in `ce-*` headers, the data as the body, the
/// data's content type (none for one event: JSON is implied). Sending the same events again
/// structured, or binary with a percent-encoded source, changes nothing.
async fn http_binary_mode_from_the_sdk_bills_like_gpubill_rate(db: Db) {
    let t = ready(db).await;
    let binary = messages("http-binary.json");
    assert!(
        binary[2].headers.iter().all(|(n, _)| n != "content-type"),
        "the SDK sends no content-type for an event without datacontenttype"
    );
    for m in &binary {
        assert_eq!(outcomes(&send(&t, m).await), ["accepted"], "{m:?}");
    }
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 6);
    for m in messages("http-structured.json") {
        assert_eq!(outcomes(&send(&t, &m).await), ["duplicate"], "{m:?}");
    }
    // The HTTP binding percent-encodes header values; "%2F" is "/".
    let encoded = binary[0].with("ce-source", "node%2Fgz-a-017");
    assert_eq!(outcomes(&send(&t, &encoded).await), ["duplicate"]);
    // What is billed changed under the same identity: a conflict, as in structured mode.
    let changed = binary[0].body(
        &binary[0]
            .body
            .replace("\"quantity\": \"1\"", "\"quantity\": \"2\""),
    );
    assert_eq!(outcomes(&send(&t, &changed).await), ["conflict"]);
    let dead = t.state.store.log().dead_letters(0, 100).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(
        (dead[0].source.as_deref(), dead[0].event_id.as_deref()),
        (Some("node/gz-a-017"), Some("hb-000042"))
    );
    closes_like_the_offline_rater(&t).await;
}
on_both!(http_binary_mode_from_the_sdk_bills_like_gpubill_rate);

/// The six events sent in every mode at once, each also redelivered in another mode: six
/// accepted, every redelivery a duplicate, and the invoices of all-structured.
async fn a_mix_of_modes_with_redeliveries_across_them_bills_like_all_structured(db: Db) {
    let t = ready(db).await;
    let binary = messages("http-binary.json");
    let structured = messages("http-structured.json");
    let kafka_structured = messages("kafka-structured.json");
    let json = [("content-type".to_string(), "application/json".to_string())];
    let mut seen = Vec::new();
    seen.extend(outcomes(&send(&t, &binary[0]).await));
    seen.extend(outcomes(&send(&t, &structured[1]).await));
    seen.extend(outcomes(
        &send_batch(
            &t,
            &[
                &structured[2].body,
                &structured[5].body,
                &structured[0].body,
            ],
        )
        .await,
    ));
    seen.extend(outcomes(&send(&t, &binary[3]).await));
    // One event under application/json: the route's other structured spelling.
    seen.extend(outcomes(&post(&t, &json, structured[4].body.clone()).await));
    // Redeliveries, each in a mode the event was not first sent in.
    seen.extend(outcomes(&send(&t, &binary[2]).await));
    seen.extend(outcomes(&send(&t, &structured[3]).await));
    seen.extend(outcomes(
        &send(&t, &binary[5].with("ce-source", "node%2Fgz-b-002")).await,
    ));
    // The SDK's Kafka value carries a partitionkey extension: not part of the content.
    let ce_json = [(
        "content-type".to_string(),
        "application/cloudevents+json".to_string(),
    )];
    seen.extend(outcomes(
        &post(&t, &ce_json, kafka_structured[4].body.clone()).await,
    ));
    seen.extend(outcomes(&send_batch(&t, &[&structured[1].body]).await));
    assert_eq!(
        seen,
        [
            "accepted",
            "accepted",
            "accepted",
            "accepted",
            "duplicate",
            "accepted",
            "accepted",
            "duplicate",
            "duplicate",
            "duplicate",
            "duplicate",
            "duplicate",
        ]
    );
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 6);
    assert_no_dead_letters(&t).await;
    closes_like_the_offline_rater(&t).await;
}
on_both!(a_mix_of_modes_with_redeliveries_across_them_bills_like_all_structured);

/// Binary input gpubill cannot bill is stored and dead-lettered with its reason (and the
/// identity when the headers name it), never dropped and never a 400; the good event sent
/// afterwards is accepted.
async fn bad_binary_input_is_dead_lettered_with_its_reason(db: Db) {
    let t = ready(db).await;
    let good = messages("http-binary.json").remove(0);
    let cases = [
        (good.without("ce-id"), "missing_id"),
        (good.with("ce-time", "yesterday"), "bad_time"),
        (
            good.with("content-type", "text/plain")
                .body("8 GPUs for 2 hours"),
            "wrong_type",
        ),
        (good.body("{\"lease\": \"l-9\","), "malformed_json"),
        (good.with("ce-source", "node%2Fgz-a-017%"), "malformed_json"),
        (good.with("ce-specversion", "0.3"), "bad_specversion"),
    ];
    for (m, reason) in &cases {
        assert_eq!(outcomes(&send(&t, m).await), [*reason], "{m:?}");
    }
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 0);
    let dead = t.state.store.log().dead_letters(0, 100).await.unwrap();
    assert_eq!(
        dead.iter().map(|d| d.reason.as_str()).collect::<Vec<_>>(),
        cases.iter().map(|(_, r)| *r).collect::<Vec<_>>()
    );
    assert_eq!(
        (dead[0].source.as_deref(), dead[0].event_id.as_deref()),
        (Some("node/gz-a-017"), None)
    );
    for d in &dead[1..] {
        assert_eq!(d.event_id.as_deref(), Some("hb-000042"), "{d:?}");
    }
    assert_eq!(
        dead[2].detail,
        "binary mode: content-type \"text/plain\" is not JSON (application/json or a +json type); gpubill's events carry JSON data"
    );
    // The dead letter keeps what was received: the headers and the body.
    assert!(
        dead[2].payload.contains("8 GPUs for 2 hours"),
        "{:?}",
        dead[2]
    );
    assert!(
        dead[4].payload.contains("node%2Fgz-a-017%"),
        "{:?}",
        dead[4]
    );
    assert!(
        dead[4]
            .detail
            .contains("ce-source: a % not followed by two hex digits"),
        "{:?}",
        dead[4]
    );
    // A refused message takes no identity.
    assert_eq!(outcomes(&send(&t, &good).await), ["accepted"]);
}
on_both!(bad_binary_input_is_dead_lettered_with_its_reason);

// ---- Kafka (tansu on 127.0.0.1:9092, PostgreSQL) ----------------------------------------------

/// Produces recorded messages with their headers, keyed as recorded (by account): the
/// partition follows the key, so an event and its redeliveries share a partition.
async fn produce_messages(topic: &str, messages: &[Message]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("message.timeout.ms", "20000")
        .create()
        .unwrap();
    for m in messages {
        let mut headers = OwnedHeaders::new();
        for (name, value) in &m.headers {
            headers = headers.insert(Header {
                key: name,
                value: Some(value.as_bytes()),
            });
        }
        producer
            .send(
                FutureRecord::to(topic)
                    .key(&m.key)
                    .payload(&m.body)
                    .headers(headers),
                Duration::from_secs(20),
            )
            .await
            .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}"));
    }
}

/// Structured mode as the SDK's Kafka producer writes it (its `content-type` header names the
/// data's type, not the event format: no `ce_specversion` header, so structured).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_structured_mode_from_the_sdk_bills_like_gpubill_rate() {
    let topic = topic_with_partitions(4).await;
    let records = messages("kafka-structured.json");
    produce_messages(&topic, &records).await;
    let t = ready(Db::Postgres).await;
    consume_until_offsets(&t, &topic, 6, Some(records.len() as i64)).await;
    assert_no_dead_letters(&t).await;
    closes_like_the_offline_rater(&t).await;
}

/// Binary mode as the SDK's Kafka producer writes it: `ce_*` headers, the data as the value.
/// A record whose data is not JSON (with a NUL byte) is dead-lettered with its reason and the
/// partition moves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_binary_mode_from_the_sdk_bills_like_gpubill_rate() {
    let topic = topic_with_partitions(4).await;
    let binary = messages("kafka-binary.json");
    let mut records = vec![
        binary[0]
            .with("content-type", "text/plain")
            .body("8 GPUs\u{0}"),
    ];
    records.extend(binary.iter().cloned());
    produce_messages(&topic, &records).await;
    let t = ready(Db::Postgres).await;
    consume_until_offsets(&t, &topic, 6, Some(records.len() as i64)).await;
    let dead = t.state.store.log().dead_letters(0, 100).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(
        (dead[0].reason.as_str(), dead[0].event_id.as_deref()),
        ("wrong_type", Some("hb-000042"))
    );
    assert!(dead[0].payload.contains("ce_specversion"), "{:?}", dead[0]);
    closes_like_the_offline_rater(&t).await;
}

/// Kafka records in both modes with redeliveries across them (and a binary record without
/// `ce_id`): six events, the invoices of all-structured, and `gpubill replay` of the topic
/// rebuilds every projection, the dead letter included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_mixed_modes_bill_like_all_structured_and_replay_identically() {
    let (topic, topics) = replayable_topics().await;
    let binary = messages("kafka-binary.json");
    let structured = messages("kafka-structured.json");
    let records = vec![
        binary[0].clone(),
        structured[1].clone(),
        binary[2].clone(),
        structured[0].clone(),
        binary[1].without("ce_id"),
        structured[3].clone(),
        binary[4].clone(),
        structured[5].clone(),
        binary[1].clone(),
        binary[3].clone(),
        structured[2].clone(),
        binary[5].clone(),
        structured[4].clone(),
    ];
    produce_messages(&topic, &records).await;

    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(&book()).await;
    consume_until_offsets(&a, &topic, 6, Some(records.len() as i64)).await;
    assert_eq!(a.state.store.log().event_count().await.unwrap(), 6);
    let dead = a.state.store.log().dead_letters(0, 100).await.unwrap();
    assert_eq!(
        dead.iter()
            .map(|d| (d.reason.as_str(), d.source.as_deref()))
            .collect::<Vec<_>>(),
        [("missing_id", Some("node/gz-a-017"))]
    );
    closes_like_the_offline_rater(&a).await;
    relay_all(&a).await;

    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    let report = billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), &topic, &topics.commands),
        || DEC_2_2026_MS + 60_000,
    )
    .await
    .unwrap();
    assert_eq!(report.records, records.len() as u64, "{report:?}");
    let original = projections(&a.state.store).await;
    assert!(original.iter().any(|r| r.starts_with("invoice|")));
    assert_eq!(projections(&b.state.store).await, original);
}
