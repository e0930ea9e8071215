//! The Kafka pipeline against a real broker (tansu on 127.0.0.1:9092, started by
//! ./scripts/test) and real PostgreSQL.

use billing_kafka::ConsumerSettings;
use gpubill_tests::*;
use rdkafka::config::ClientConfig;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shuffled_redelivered_events_across_4_partitions_bill_like_gpubill_rate() {
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    create_topic("billing.invoices.v1", 1).await;
    let book = fixture("worked-1/pricebook.toml");
    let events: Vec<String> = fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let mut sent: Vec<String> = events
        .iter()
        .chain(events.iter().take(5))
        .cloned()
        .collect();
    shuffle(&mut sent, 3);
    // A poison record at the head of partition 0: dead-lettered, the partition moves on.
    let mut records = vec![(0, "this is not an event".to_string())];
    records.extend(
        sent.into_iter()
            .enumerate()
            .map(|(i, e)| ((i % 4) as i32, e)),
    );
    produce(&topic, &records).await;

    let t = TestApp::fresh(Db::Postgres).await;
    t.put_pricebook(&book).await;
    consume_until(&t, &topic, 9).await;
    let closed = t.close("2026-11").await;
    let offline = offline_invoices(&book, &events, "2026-11");
    let issued: Vec<serde_json::Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline);
    let dead = t.state.store.log().dead_letters(0, 10).await.unwrap();
    assert_eq!(
        dead.iter().map(|d| d.reason.as_str()).collect::<Vec<_>>(),
        ["malformed_json"]
    );
    // Offsets are in the database: 4 partitions, all consumed.
    let mut stored = 0;
    for p in 0..4 {
        stored += t
            .state
            .store
            .log()
            .stored_offset(&topic, p)
            .await
            .unwrap()
            .unwrap_or(0);
    }
    assert_eq!(
        stored,
        1 + 15,
        "every record of the 4 partitions folded once"
    );
    let (_, metrics) = t.raw("GET", "/metrics", None, "", "").await;
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(
        metrics.contains("gpubill_consumer_lag_records{partition="),
        "{metrics}"
    );

    // A second consumer of the same group on the same database starts from the stored offsets:
    // nothing is folded twice.
    produce(&topic, &[(1, events[0].replace("\"a1\"", "\"a1-late\""))]).await;
    consume_until(&t, &topic, 10).await;
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 10);
}

/// Relays the outbox until it is empty, then reads every record of `topic` from the start.
async fn relay_and_read(t: &TestApp, topic: &str) -> Vec<(String, Vec<(String, String)>)> {
    relay_all(t).await;
    read_all(topic).await
}

/// Runs the outbox relay until the outbox is empty.
/// Every record of `topic` from the start, with its headers.
async fn read_all(topic: &str) -> Vec<(String, Vec<(String, String)>)> {
    use rdkafka::consumer::{Consumer, StreamConsumer};
    use rdkafka::message::{Headers, Message};
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("group.id", format!("reader-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let mut out = Vec::new();
    while let Ok(Ok(m)) = tokio::time::timeout(
        Duration::from_secs(if out.is_empty() { 30 } else { 3 }),
        consumer.recv(),
    )
    .await
    {
        let headers = m
            .headers()
            .map(|h| {
                h.iter()
                    .map(|x| {
                        (
                            x.key.to_string(),
                            String::from_utf8_lossy(x.value.unwrap_or_default()).into_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push((
            String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
            headers,
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_and_issued_invoices_are_relayed_with_their_ids() {
    let topic = topic_with_partitions(1).await;
    let dlq = format!("{topic}.dlq");
    create_topic(&dlq, 1).await;
    create_topic("billing.invoices.v1", 1).await;
    let good = fixture("worked-1/events.jsonl")
        .lines()
        .next()
        .unwrap()
        .to_string();
    produce(
        &topic,
        &[(0, "{\"specversion\":\"1.0\"}".to_string()), (0, good)],
    )
    .await;
    let t = TestApp::fresh(Db::Postgres).await;
    consume_until(&t, &topic, 1).await;
    let letters = relay_and_read(&t, &dlq).await;
    assert_eq!(letters.len(), 1, "{letters:?}");
    let (payload, headers) = &letters[0];
    assert_eq!(payload, "{\"specversion\":\"1.0\"}");
    assert!(
        headers.contains(&("gpubill-reason".to_string(), "missing_id".to_string())),
        "{headers:?}"
    );
    assert!(
        headers.iter().any(|(k, _)| k == "gpubill-outbox-seq"),
        "{headers:?}"
    );
    assert_eq!(
        t.state.store.log().dead_letters(0, 10).await.unwrap().len(),
        1,
        "and in the dead-letter table"
    );
}

fn with_sink(t: TestApp, brokers: &str, topic: &str, timeout: Duration) -> TestApp {
    let mut state = t.state.clone();
    state.sink = Some(std::sync::Arc::new(
        billing_kafka::UsageSink::new(brokers, topic, timeout).unwrap(),
    ));
    TestApp {
        app: billing_api::router(state.clone()),
        state,
        url: t.url,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_ingest_in_kafka_mode_hands_off_to_the_topic_and_the_consumer_bills_it() {
    let topic = topic_with_partitions(2).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let t = with_sink(
        TestApp::fresh(Db::Postgres).await,
        brokers(),
        &topic,
        Duration::from_secs(5),
    );
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    let events: Vec<String> = fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let mut sent = events.clone();
    sent.push("{\"specversion\":\"1.0\"}".into());
    let v = t.ingest(&sent).await;
    assert_eq!(
        (v["accepted"].as_u64(), v["rejected"].as_u64()),
        (Some(10), Some(1)),
        "{v}"
    );
    assert_eq!(
        t.state.store.log().event_count().await.unwrap(),
        0,
        "handed off, not folded by the API"
    );
    consume_until(&t, &topic, 9).await;
    let closed = t.close("2026-11").await;
    let issued: Vec<serde_json::Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(&book, &events, "2026-11"));
    assert_eq!(
        t.state.store.log().dead_letters(0, 10).await.unwrap().len(),
        1,
        "the invalid one was dead-lettered by the consumer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_ingest_answers_503_within_bounded_time_when_the_broker_is_unreachable() {
    let t = with_sink(
        TestApp::fresh(Db::Sqlite).await,
        "127.0.0.1:1",
        "gpu.usage.v1",
        Duration::from_secs(2),
    );
    let event = fixture("worked-1/events.jsonl")
        .lines()
        .next()
        .unwrap()
        .to_string();
    let started = std::time::Instant::now();
    let (status, v) = t
        .call(
            "POST",
            "/v1/events",
            Some(INGEST),
            "application/cloudevents+json",
            event,
        )
        .await;
    assert_eq!(status, axum::http::StatusCode::SERVICE_UNAVAILABLE, "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "took {:?}",
        started.elapsed()
    );
    assert!(v["message"].as_str().unwrap().contains("retry"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_rebuilds_every_projection_and_byte_identical_invoices() {
    let (topic, topics) = replayable_topics().await;
    let book = fixture("worked-1/pricebook.toml");
    let events: Vec<String> = fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let mut sent: Vec<String> = events
        .iter()
        .chain(events.iter().take(4))
        .cloned()
        .collect();
    shuffle(&mut sent, 11);
    // Keyed by account, as node agents produce: redeliveries of an event share its partition,
    // so "the first one stands" has one answer (Kafka orders records within a partition only).
    let by_account = |e: &str| {
        let v: serde_json::Value = serde_json::from_str(e).unwrap();
        (v["subject"]
            .as_str()
            .unwrap()
            .bytes()
            .map(u32::from)
            .sum::<u32>()
            % 4) as i32
    };
    let mut records = vec![(2, "{\"specversion\":\"1.0\"}".to_string())];
    records.extend(sent.into_iter().map(|e| (by_account(&e), e)));
    produce(&topic, &records).await;

    // The original run: a price book, an account, the usage, a close, then late usage.
    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(&book).await;
    a.account("a-registered").await;
    a.account("acme").await;
    let (status, v) = a
        .admin(
            "PUT",
            "/v1/admin/accounts/a-registered/quotas",
            "{\"prepaid_balance\":\"100.00\",\"gpu_hours\":{\"gpu.h100-80g\":\"1000\"}}",
        )
        .await;
    assert_eq!(status, axum::http::StatusCode::OK, "{v}");
    let (status, v) = a
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            "{\"gpu_hours\":{\"gpu.h100-80g\":\"5\"}}",
        )
        .await;
    assert_eq!(status, axum::http::StatusCode::OK, "{v}");
    consume_until_offsets(&a, &topic, 9, Some(records.len() as i64)).await;
    let closed = a.close("2026-11").await;
    assert!(closed.as_array().unwrap().len() >= 2, "{closed}");
    // Another lease of the same usage: it adds to November (an adjustment in December).
    let late = events[0]
        .replace("\"id\":\"", "\"id\":\"late-")
        .replace("L1", "L9");
    produce(&topic, &[(3, late)]).await;
    consume_until(&a, &topic, 10).await;
    assert_eq!(
        a.state
            .store
            .log()
            .late_usage(Some("2026-11"))
            .await
            .unwrap()
            .len(),
        1
    );
    // Finance (issue 12): a top-up, December's close carrying the late usage as an
    // adjustment (settled from the wallet as far as it goes), a payment of the rest.
    let a = a.at(JAN_2_2027_MS);
    let (status, v) = a
        .admin(
            "POST",
            "/v1/admin/accounts/acme/topups",
            r#"{"amount":"5.00","reference":"wire-1"}"#,
        )
        .await;
    assert_eq!(status, axum::http::StatusCode::CREATED, "{v}");
    // The top-up pays what is already owed first (issue 24.2, oldest first): November.
    let november_acme = closed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "acme")
        .unwrap();
    let settled = v["settled"].as_array().unwrap();
    assert_eq!(settled.len(), 1, "{v}");
    assert_eq!(settled[0]["invoice"], november_acme["id"], "{v}");
    let to_december = rust_decimal::Decimal::from(5)
        - settled[0]["amount"]
            .as_str()
            .unwrap()
            .parse::<rust_decimal::Decimal>()
            .unwrap();
    let december = a.close("2026-12").await;
    let acme = december
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "acme")
        .unwrap()
        .clone();
    assert!(acme["adjustments"].is_array(), "{acme}");
    assert_eq!(
        acme["paid"]
            .as_str()
            .unwrap()
            .parse::<rust_decimal::Decimal>()
            .unwrap(),
        to_december.min(acme["amount_due"].as_str().unwrap().parse().unwrap()),
        "{acme}"
    );
    let (status, v) = a
        .admin(
            "POST",
            &format!(
                "/v1/admin/invoices/{}/payments",
                acme["id"].as_str().unwrap()
            ),
            r#"{"reference":"bank-1"}"#,
        )
        .await;
    assert_eq!(status, axum::http::StatusCode::CREATED, "{v}");
    relay_all(&a).await;
    // A relay that crashed after the broker's acknowledgement publishes commands again.
    let (folds, commands): (Vec<_>, Vec<_>) = read_all(&topics.commands)
        .await
        .into_iter()
        .partition(|(payload, _)| payload.contains("\"type\":\"usage.folded\""));
    assert_eq!(
        commands.len(),
        9,
        "price book, 2 accounts, 2 quotas, close, top-up, close, payment: {commands:?}"
    );
    assert!(!folds.is_empty(), "every fold is recorded (issue 30)");
    produce(&topics.commands, &[(0, commands[5].0.clone())]).await;
    // A fold record relayed twice is folded once.
    produce(&topics.commands, &[(0, folds[0].0.clone())]).await;

    // The replay, into an empty database.
    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    let report = billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), &topic, &topics.commands),
        || DEC_2_2026_MS + 60_000,
    )
    .await
    .unwrap();
    assert_eq!(
        (report.commands, report.duplicate_commands, report.folds),
        (9, 2, folds.len()),
        "{report:?}"
    );
    assert_eq!(report.records, records.len() as u64 + 1);
    let (original, replayed) = (
        projections(&a.state.store).await,
        projections(&b.state.store).await,
    );
    assert!(original.iter().any(|r| r.starts_with("invoice|")));
    assert!(original.iter().any(|r| r.starts_with("late|")));
    assert!(original.iter().any(|r| r.starts_with("quotas|")));
    for table in ["adjustment|", "movement|", "payment|", "wallet|", "series|"] {
        assert!(
            original.iter().any(|r| r.starts_with(table)),
            "{table}: {original:#?}"
        );
    }
    let decisions: Vec<&String> = original
        .iter()
        .filter(|r| r.starts_with("decision|"))
        .collect();
    assert_eq!(decisions.len(), 2, "warn and limit for acme: {decisions:?}");
    assert_eq!(original, replayed);
    // The API serves the same bytes.
    let id = closed[0]["id"].as_str().unwrap();
    let uri = format!("/v1/invoices/{id}");
    assert_eq!(
        a.raw("GET", &uri, Some(ADMIN), "", "").await,
        b.raw("GET", &uri, Some(ADMIN), "", "").await
    );
    assert!(
        b.state
            .store
            .log()
            .outbox_pending(1)
            .await
            .unwrap()
            .is_empty(),
        "a replay relays nothing again"
    );
    // Only into an empty database.
    let again = billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), &topic, &topics.commands),
        || DEC_2_2026_MS,
    )
    .await
    .unwrap_err();
    assert!(again.to_string().contains("empty database"), "{again}");
}

/// Issue 5 through the Kafka pipeline: 8 nodes x 8 GPUs report every 10 s (with 10%
/// redeliveries) against a 1,000 GPU-hour quota. The consumer is stopped between the warning
/// and the limit and a new one takes over: one `warn`, one `limit`, each overshooting its
/// threshold by at most one consumer batch of usage, relayed once each to the quota topic with
/// the ids the API shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_decisions_through_kafka_once_each_within_a_batch_across_a_consumer_restart() {
    use rust_decimal::Decimal;
    let topic = topic_with_partitions(4).await;
    let topics = billing_store::Topics {
        quota: format!("{topic}.quota"),
        commands: format!("{topic}.commands"),
        ..Default::default()
    };
    for t in [&topics.quota, &topics.commands, &format!("{topic}.dlq")] {
        create_topic(t, 1).await;
    }
    let t = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    t.put_pricebook("currency = \"CNY\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"36\"\n")
        .await;
    let key = t.account("acme").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            r#"{"gpu_hours":{"gpu.h100-80g":"1000"}}"#,
        )
        .await;
    assert_eq!(s, axum::http::StatusCode::OK, "{v}");
    let start = 1_793_577_600; // 2026-11-02T00:00:00Z
    let reports = |from_h: i64, to_h: i64| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for at in (start + from_h * 3600..start + to_h * 3600).step_by(10) {
            for n in 0..8u32 {
                let r = node_report(n, at);
                if (at / 10 + n as i64) % 10 == 0 {
                    out.push(("acme".to_string(), r.clone().into_bytes())); // redelivery
                }
                out.push(("acme".to_string(), r.into_bytes()));
            }
        }
        out
    };
    // 13 h of 64 GPUs = 832 GPU-hours: past the warning (800), short of the limit.
    let first = reports(0, 13);
    produce_keyed(&topic, &first).await;
    consume_until(&t, &topic, 13 * 360 * 8).await;
    let (_, v) = t.get("/v1/quota/decisions", &key).await;
    let kinds = |v: &serde_json::Value| -> Vec<String> {
        v["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&v), ["warn"], "{v}");
    // A new consumer (a restart) folds the rest: to 17 h (1,088 GPU-hours).
    produce_keyed(&topic, &reports(13, 17)).await;
    consume_until(&t, &topic, 17 * 360 * 8).await;
    let (_, v) = t.get("/v1/quota/decisions", &key).await;
    assert_eq!(kinds(&v), ["warn", "limit"], "{v}");
    let list = v["decisions"].as_array().unwrap();
    // A consumer batch holds at most `batch_max` records of 80 GPU-seconds each.
    let batch_max = ConsumerSettings::new(brokers(), &topic).batch_max;
    assert_crossed_within_a_batch(
        list,
        Decimal::from(batch_max as i64 * 80) / Decimal::from(3600),
    );
    assert_eq!(
        list[1]["position"][0]["consumer"],
        topic.as_str(),
        "{}",
        list[1]
    );
    // Relayed once each, with the ids the API shows.
    let relayed: Vec<serde_json::Value> = relay_and_read(&t, &topics.quota)
        .await
        .into_iter()
        .map(|(payload, _)| serde_json::from_str(&payload).unwrap())
        .collect();
    let ids = |l: &[serde_json::Value]| -> Vec<String> {
        l.iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&relayed), ids(list), "{relayed:?}");
    // The provisional cost followed every batch: 1,088 GPU-hours at 36.
    let p = t
        .state
        .store
        .finance()
        .provisional("acme", "2026-11", DEC_2_2026_MS)
        .await
        .unwrap()
        .unwrap();
    assert!(p.position.is_array(), "{p:?}");
    assert_eq!(p.invoice.total, Decimal::from(1088 * 36));
}

/// The partitions of `topic` in the broker's metadata (0 when it has none).
fn partitions(topic: &str) -> usize {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .create()
        .unwrap();
    let metadata = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .map_or(0, |t| t.partitions().len())
}

fn plan(prefix: &str) -> billing_kafka::TopicPlan {
    billing_kafka::TopicPlan {
        usage: vec![prefix.to_string()],
        usage_partitions: 3,
        commands: format!("{prefix}.commands"),
        outputs: vec![format!("{prefix}.invoices"), format!("{prefix}.dlq")],
    }
}

/// Issue 24, item 10: a broker that auto-creates topics made the commands topic with 4
/// partitions; the commands lost their one order and `gpubill replay` refused to run, long
/// after the fact. Now serve refuses to start, naming the topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_topic_of_4_partitions_is_refused_naming_it() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let plan = plan(&format!("gpu.usage.topics-{}-{nanos}", std::process::id()));
    create_topic(&plan.commands, 4).await;
    let err = billing_kafka::ensure_topics(brokers(), &plan)
        .await
        .expect_err("a commands topic of 4 partitions is refused");
    match &err {
        billing_kafka::TopicError::CommandsPartitioned { topic, partitions } => {
            assert_eq!((topic, *partitions), (&plan.commands, 4));
        }
        other => panic!("{other}"),
    }
    let message = err.to_string();
    assert!(message.contains(&plan.commands), "{message}");
    assert!(message.contains("4 partitions"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_topics_are_created_the_commands_topic_with_one_partition() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let plan = plan(&format!("gpu.usage.topics-{}-{nanos}", std::process::id()));
    let ensured = billing_kafka::ensure_topics(brokers(), &plan)
        .await
        .unwrap();
    let mut created = ensured.created.clone();
    created.sort();
    let mut all: Vec<String> = plan
        .usage
        .iter()
        .chain([&plan.commands])
        .chain(&plan.outputs)
        .cloned()
        .collect();
    all.sort();
    assert_eq!(created, all);
    assert_eq!(partitions(&plan.commands), 1);
    assert_eq!(partitions(&plan.usage[0]), 3);
    assert_eq!(partitions(&plan.outputs[0]), 1);
    // At the next start they exist: nothing is created, nothing refused.
    let again = billing_kafka::ensure_topics(brokers(), &plan)
        .await
        .unwrap();
    assert_eq!(again.created, Vec::<String>::new());
}

/// `POST /v1/events` of `events` (a CloudEvents batch): its status and how long it took.
async fn post_events(
    t: &TestApp,
    events: &[String],
) -> (axum::http::StatusCode, Duration, serde_json::Value) {
    let started = std::time::Instant::now();
    let (status, body) = t
        .call(
            "POST",
            "/v1/events",
            Some(INGEST),
            "application/cloudevents-batch+json",
            format!("[{}]", events.join(",")),
        )
        .await;
    (status, started.elapsed(), body)
}

/// Issue 30: with the broker paused (SIGSTOP) the ingest answered 503, rightly; after it
/// resumed (SIGCONT) every POST answered 503 `ProducerFenced` for as long as the process
/// lived: the idempotent producer's new epoch was fenced, which librdkafka treats as fatal,
/// and the sink kept that producer. Now it makes a new one: the next POST answers 200, and
/// every event is billed once (the batch refused with 503 may have been written as well).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_answers_200_again_after_a_paused_broker_resumes_and_bills_each_event_once() {
    let broker = OwnBroker::start();
    create_topic_at(&broker.addr, "usage", 4).await;
    create_topic_at(&broker.addr, "usage.dlq", 1).await;
    let t = TestApp::fresh(Db::Postgres).await.with_usage_sink(
        &broker.addr,
        "usage",
        Duration::from_secs(5),
    );
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    let events: Vec<String> = fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let (first, second) = events.split_at(5);
    t.ingest(first).await;

    broker.pause();
    let (status, took, body) = post_events(&t, second).await;
    assert_eq!(
        status,
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "{body}"
    );
    assert!(took < Duration::from_secs(8), "{took:?}");
    // Paused a while longer: the producer's session times out as well.
    tokio::time::sleep(Duration::from_secs(3)).await;
    broker.resume();
    tokio::time::sleep(Duration::from_secs(1)).await;

    // The client retries the batch refused with 503: the next POST answers 200.
    let (status, took, body) = post_events(&t, second).await;
    assert_eq!(status, axum::http::StatusCode::OK, "after {took:?}: {body}");
    let (status, _, body) = post_events(&t, &events).await;
    assert_eq!(status, axum::http::StatusCode::OK, "{body}");

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut settings = ConsumerSettings::new(&broker.addr, "usage");
    settings.dead_letter_topic = Some("usage.dlq".into());
    let consumer = tokio::spawn(billing_kafka::run(
        t.state.store.clone(),
        settings,
        || DEC_2_2026_MS,
        stop_rx,
    ));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while t.state.store.log().event_count().await.unwrap() < 9 {
        assert!(!consumer.is_finished(), "{:?}", consumer.await);
        assert!(std::time::Instant::now() < deadline, "not folded in 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A little longer: nothing else arrives (no event counted twice).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 9);
    stop_tx.send(true).unwrap();
    consumer.await.unwrap().unwrap();
    let closed = t.close("2026-11").await;
    let issued: Vec<serde_json::Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(&book, &events, "2026-11"));
}

// ---- Issue 30: the replay decides with the clock the live engine recorded ------------------

/// A usage event of one GPU-hour from `start_s`, told by `source`.
fn gpu_hour(id: &str, source: &str, start_s: i64) -> String {
    let at = |s: i64| {
        chrono::DateTime::from_timestamp(s, 0)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    serde_json::json!({
        "specversion": "1.0", "id": id, "source": source, "type": "gpu.usage",
        "subject": "acme", "time": at(start_s + 3600),
        "data": {"lease": "L1", "resource": "gpu0", "sku": "gpu.h100-80g",
                 "start": at(start_s), "end": at(start_s + 3600)}
    })
    .to_string()
}

const THREE_PER_HOUR: &str =
    "currency = \"CNY\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"3.00\"\n";

/// Everything a replay rebuilds as the API serves it (issue 30): invoices and journal exports
/// of `periods`, dead letters, pending adjustments, the audit log, and the customer's
/// invoices, balance and usage as known at `known_at`.
async fn exports(t: &TestApp, key: &str, periods: &[&str], known_at: &str) -> Vec<String> {
    let mut uris: Vec<(String, &str)> = vec![
        ("/v1/admin/dead-letters".into(), ADMIN),
        ("/v1/admin/adjustments".into(), ADMIN),
        ("/v1/admin/audit".into(), ADMIN),
        ("/v1/invoices".into(), key),
        ("/v1/balance".into(), key),
        (
            format!(
                "/v1/usage?from=2026-08-01T00:00:00Z&to=2027-03-01T00:00:00Z&granularity=day&as_known_at={known_at}"
            ),
            key,
        ),
    ];
    for p in periods {
        for what in ["invoices", "journal"] {
            for format in ["csv", "jsonl"] {
                uris.push((
                    format!("/v1/admin/exports/{what}?period={p}&format={format}"),
                    ADMIN,
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (uri, token) in uris {
        let (status, body) = t.raw("GET", &uri, Some(token), "", "").await;
        let body = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(status, axum::http::StatusCode::OK, "{uri}: {body}");
        out.push(format!("{uri}\n{body}"));
    }
    out
}

/// Replays `topic` and `topics` into an empty PostgreSQL database with a replay clock far
/// from the original's (it must not matter), and checks every projection and export.
async fn replay_matches(
    a: &TestApp,
    topic: &str,
    topics: &billing_store::Topics,
    (key, periods, known_at): (&str, &[&str], &str),
) -> TestApp {
    relay_all(a).await;
    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone())
        .await
        .with_dedupe_horizon(NINETY_DAYS_S)
        .await
        .at(a_clock(a));
    let report = billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), topic, &topics.commands),
        || JAN_2_2027_MS + 200 * 86_400_000,
    )
    .await
    .unwrap();
    assert!(report.folds > 0, "{report:?}");
    let (original, replayed) = (
        projections(&a.state.store).await,
        projections(&b.state.store).await,
    );
    assert_eq!(original, replayed);
    assert_eq!(
        exports(a, key, periods, known_at).await,
        exports(&b, key, periods, known_at).await
    );
    b
}

/// The engine's default dedupe horizon (the tests' apps have a century, see `open_with`).
const NINETY_DAYS_S: i64 = 90 * 86_400;

fn a_clock(t: &TestApp) -> i64 {
    (t.state.clock)()
}

/// The issue's first case: one partition, a node agent whose clock is 60 days fast (its usage
/// and its record's Kafka timestamp), and ordinary usage of the month before last. The live
/// engine refuses the first as `too_early` and bills the second (3.00); the replay decides the
/// same with the clock the engine recorded, and issues the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skewed_agent_is_refused_alike_live_and_on_replay() {
    const OCT_15_2026_S: i64 = 1_792_022_400;
    const SIXTY_DAYS_S: i64 = 60 * 86_400;
    let (topic, topics) = replayable_topics().await;
    let skewed_s = DEC_2_2026_MS / 1000 + SIXTY_DAYS_S;
    let s = gpu_hour("s-1", "node/fast", skewed_s);
    let u = gpu_hour("u-1", "node/ok", OCT_15_2026_S);
    produce_at(
        &topic,
        &[
            (0, s, (skewed_s + 3600) * 1000),
            (0, u, (OCT_15_2026_S + 3600) * 1000),
        ],
    )
    .await;
    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone())
        .await
        .with_dedupe_horizon(NINETY_DAYS_S)
        .await;
    a.put_pricebook(THREE_PER_HOUR).await;
    let key = a.account("acme").await;
    consume_at(&a, &topic, 1, Some(2), DEC_2_2026_MS).await;
    let dead = a.state.store.log().dead_letters(0, 10).await.unwrap();
    assert_eq!(
        dead.iter().map(|d| d.reason.as_str()).collect::<Vec<_>>(),
        ["too_early"]
    );
    let october = a.close("2026-10").await;
    assert_eq!(october[0]["total"], "3.00", "{october}");
    let b = replay_matches(
        &a,
        &topic,
        &topics,
        (&key, &["2026-10"], "2026-12-02T00:00:00Z"),
    )
    .await;
    let id = october[0]["id"].as_str().unwrap();
    let (_, replayed) = b.get(&format!("/v1/invoices/{id}"), &key).await;
    assert_eq!(
        (&replayed["number"], &replayed["total"]),
        (&october[0]["number"], &october[0]["total"])
    );
}

/// The issue's second case: a partition whose records span more than the dedupe horizon (90
/// days). September's usage is folded in September; in December, new usage and a redelivery
/// of September's arrive (the redelivery is `too_late` then). A replay reads them all at
/// once: with the recorded clocks, September's usage is accepted again and its redelivery
/// refused again, and every projection and export is the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_spanning_more_than_the_dedupe_horizon_replays_identically() {
    const SEP_1_2026_S: i64 = 1_788_220_800;
    const SEP_2_2026_MS: i64 = 1_788_307_200_000;
    const DEC_20_2026_S: i64 = 1_797_724_800;
    const DEC_21_2026_MS: i64 = 1_797_811_200_000;
    let (topic, topics) = replayable_topics().await;
    let september = gpu_hour("sep-1", "node/1", SEP_1_2026_S);
    produce_at(&topic, &[(1, september.clone(), SEP_1_2026_S * 1000)]).await;
    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone())
        .await
        .with_dedupe_horizon(NINETY_DAYS_S)
        .await
        .at(SEP_2_2026_MS);
    a.put_pricebook(THREE_PER_HOUR).await;
    let key = a.account("acme").await;
    consume_at(&a, &topic, 1, Some(1), SEP_2_2026_MS).await;
    produce_at(
        &topic,
        &[
            (1, september, DEC_20_2026_S * 1000),
            (
                1,
                gpu_hour("dec-1", "node/1", DEC_20_2026_S),
                DEC_20_2026_S * 1000,
            ),
        ],
    )
    .await;
    let a = a.at(DEC_21_2026_MS);
    consume_at(&a, &topic, 2, Some(3), DEC_21_2026_MS).await;
    let dead = a.state.store.log().dead_letters(0, 10).await.unwrap();
    assert_eq!(
        dead.iter().map(|d| d.reason.as_str()).collect::<Vec<_>>(),
        ["too_late"]
    );
    let closed = a.close("2026-09").await;
    assert_eq!(closed[0]["total"], "3.00", "{closed}");
    replay_matches(
        &a,
        &topic,
        &topics,
        (&key, &["2026-09"], "2026-09-03T00:00:00Z"),
    )
    .await;
}
