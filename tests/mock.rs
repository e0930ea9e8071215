//! Fault injection with librdkafka's in-process mock cluster (`rdkafka::mocking`): the broker
//! down for 30 s mid-stream, and produce errors injected under the outbox relay. The store is
//! real PostgreSQL (./scripts/test starts it).

use billing_kafka::ConsumerSettings;
use gpubill_tests::*;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};
use rdkafka::mocking::MockCluster;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn worked_events() -> Vec<String> {
    fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

async fn wait_for(what: &str, within: Duration, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done().await {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_down_for_30_s_mid_stream_loses_nothing_and_ingest_answers_503() {
    let cluster = MockCluster::new(1).unwrap();
    let brokers = cluster.bootstrap_servers();
    cluster.create_topic("usage", 4, 1).unwrap();
    cluster.create_topic("usage.dlq", 1, 1).unwrap();
    let t = TestApp::fresh(Db::Postgres).await;
    let mut state = t.state.clone();
    state.sink = Some(Arc::new(
        billing_kafka::UsageSink::new(&brokers, "usage", Duration::from_secs(3)).unwrap(),
    ));
    let t = TestApp {
        app: billing_api::router(state.clone()),
        state,
        url: t.url,
    };
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;

    // The engine consumes from the mock cluster the whole time.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut settings = ConsumerSettings::new(&brokers, "usage");
    settings.dead_letter_topic = Some("usage.dlq".into());
    let consumer = tokio::spawn(billing_kafka::run(
        t.state.store.clone(),
        settings,
        || DEC_2_2026_MS,
        stop_rx,
    ));

    // The first half goes through the HTTP ingest and is folded.
    let events = worked_events();
    let (first, second) = events.split_at(5);
    let mut first: Vec<String> = first.to_vec();
    first.push(first[0].clone()); // a redelivery
    t.ingest(&first).await;
    let store = t.state.store.clone();
    wait_for(
        "the first half folded",
        Duration::from_secs(60),
        async || {
            assert!(!consumer.is_finished(), "the consumer stopped");
            store.log().event_count().await.unwrap() == 4 // a1 is in the fixture twice
        },
    )
    .await;

    // The broker goes away for 30 s.
    cluster.broker_down(1).unwrap();
    let down = Instant::now();
    // While it cannot hand off, the ingest never answers success: 503 within a bounded time.
    let mut refusals = 0;
    while down.elapsed() < Duration::from_secs(30) {
        let started = Instant::now();
        let (status, v) = t
            .call(
                "POST",
                "/v1/events",
                Some(INGEST),
                "application/cloudevents-batch+json",
                format!("[{}]", second.join(",")),
            )
            .await;
        if down.elapsed() < Duration::from_secs(30) {
            assert_eq!(status, axum::http::StatusCode::SERVICE_UNAVAILABLE, "{v}");
            assert!(
                started.elapsed() < Duration::from_secs(6),
                "{:?}",
                started.elapsed()
            );
            refusals += 1;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    assert!(refusals >= 5, "{refusals}");
    assert!(!consumer.is_finished(), "the consumer survives the outage");
    cluster.broker_up(1).unwrap();

    // Back: the client retries the second half (and the first again, as clients do).
    let retry: Vec<String> = first.iter().chain(second).cloned().collect();
    wait_for(
        "ingest accepted again",
        Duration::from_secs(60),
        async || {
            let (status, _) = t
                .call(
                    "POST",
                    "/v1/events",
                    Some(INGEST),
                    "application/cloudevents-batch+json",
                    format!("[{}]", retry.join(",")),
                )
                .await;
            status == axum::http::StatusCode::OK
        },
    )
    .await;
    wait_for("everything folded", Duration::from_secs(90), async || {
        store.log().event_count().await.unwrap() == 9
    })
    .await;
    // A little longer: nothing else arrives (no record folded twice, none lost).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(store.log().event_count().await.unwrap(), 9);
    stop_tx.send(true).unwrap();
    consumer.await.unwrap().unwrap();
    let closed = t.close("2026-11").await;
    let issued: Vec<serde_json::Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(&book, &events, "2026-11"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_errors_under_the_outbox_relay_lose_nothing_and_duplicate_no_id() {
    let cluster = MockCluster::new(1).unwrap();
    let brokers = cluster.bootstrap_servers();
    for topic in ["commands", "invoices"] {
        cluster.create_topic(topic, 1, 1).unwrap();
    }
    let t = TestApp::open_with(
        &fresh_db(Db::Postgres).await,
        billing_store::Topics {
            commands: "commands".into(),
            invoices: "invoices".into(),
            ..Default::default()
        },
    )
    .await;
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    for i in 0..20 {
        t.account(&format!("acct-{i:02}")).await;
    }
    t.close("2026-11").await;
    let rows = t.state.store.log().outbox_pending(1000).await.unwrap();
    assert!(rows.len() > 40, "{}", rows.len());

    // Retriable errors (the idempotent producer retries them without duplicating) and
    // errors that fail a delivery (the relay retries the row itself).
    use RDKafkaRespErr::*;
    let mut errors = vec![RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS; 6];
    errors.extend([RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE; 3]);
    errors.extend([RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT; 3]);
    cluster.request_errors(RDKafkaApiKey::Produce, &errors);

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (relay_store, relay_brokers) = (t.state.store.clone(), brokers.clone());
    let relay = tokio::spawn(async move {
        billing_kafka::relay(relay_store, &relay_brokers, || DEC_2_2026_MS, stop_rx).await
    });
    let store = t.state.store.clone();
    wait_for("outbox relayed", Duration::from_secs(90), async || {
        store.log().outbox_pending(1).await.unwrap().is_empty()
    })
    .await;
    stop_tx.send(true).unwrap();
    relay.await.unwrap().unwrap();

    // Read both topics back: every outbox row is there; its id appears once per row content.
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &brokers)
        .set("group.id", "reader")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&["commands", "invoices"]).unwrap();
    let mut seen: BTreeMap<i64, (String, String)> = BTreeMap::new();
    let mut copies = 0;
    let mut commands = Vec::new();
    while let Ok(Ok(m)) = tokio::time::timeout(
        Duration::from_secs(if seen.is_empty() { 30 } else { 5 }),
        consumer.recv(),
    )
    .await
    {
        let seq: i64 = m
            .headers()
            .and_then(|h| h.iter().find(|x| x.key == "gpubill-outbox-seq"))
            .and_then(|x| std::str::from_utf8(x.value?).ok()?.parse().ok())
            .expect("every record carries its outbox id");
        let payload = String::from_utf8_lossy(m.payload().unwrap()).into_owned();
        copies += 1;
        if m.topic() == "commands" {
            commands.push(seq);
        }
        if let Some(prev) = seen.insert(seq, (m.topic().to_string(), payload.clone())) {
            assert_eq!(
                prev,
                (m.topic().to_string(), payload),
                "one id, one content"
            );
        }
    }
    // The injected errors did fail deliveries, which the relay retried.
    let failures: f64 = metrics_handle()
        .render()
        .lines()
        .find(|l| l.starts_with("gpubill_outbox_publish_failures_total"))
        .and_then(|l| l.split_whitespace().last()?.parse().ok())
        .unwrap_or(0.0);
    assert!(
        failures >= 1.0,
        "no delivery failed: the errors were not injected"
    );
    let expected: Vec<i64> = rows.iter().map(|r| r.seq).collect();
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        expected,
        "no row lost"
    );
    eprintln!(
        "{} rows, {copies} records published, {failures} failed deliveries",
        expected.len()
    );
    // The commands topic keeps the commands' order (ids ascending, a retried one repeated
    // at most right where it failed).
    let mut order = commands.clone();
    order.dedup();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{commands:?}");
}

/// Found by the simulation: with the broker down, the relay waited for its send (up to the
/// producer's 30 s message timeout) before seeing a stop, so stopping an engine during an
/// outage took 30 s. A stop now ends the relay at once; the row stays pending, for the next
/// relay to publish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_relay_stops_at_once_while_the_broker_is_down() {
    let cluster = MockCluster::new(1).unwrap();
    let brokers = cluster.bootstrap_servers();
    cluster.create_topic("commands", 1, 1).unwrap();
    let t = TestApp::open_with(
        &fresh_db(Db::Postgres).await,
        billing_store::Topics {
            commands: "commands".into(),
            ..Default::default()
        },
    )
    .await;
    t.account("acct-1").await;
    let pending = t
        .state
        .store
        .log()
        .outbox_pending(1000)
        .await
        .unwrap()
        .len();
    assert!(
        pending >= 1,
        "creating an account leaves a command to relay"
    );
    cluster.broker_down(1).unwrap();

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (relay_store, relay_brokers) = (t.state.store.clone(), brokers.clone());
    let relay = tokio::spawn(async move {
        billing_kafka::relay(relay_store, &relay_brokers, || DEC_2_2026_MS, stop_rx).await
    });
    // The relay has read the row and is waiting for the broker.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!relay.is_finished());
    let asked = Instant::now();
    stop_tx.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(5), relay)
        .await
        .expect("the relay stops within 5 s of being asked while the broker is down")
        .unwrap()
        .unwrap();
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert_eq!(
        t.state
            .store
            .log()
            .outbox_pending(1000)
            .await
            .unwrap()
            .len(),
        pending,
        "nothing unpublished is marked published"
    );
}

/// Issue 30 with librdkafka's mock cluster: the broker fences the ingest's idempotent
/// producer. The sink kept that producer and every POST answered 503 for as long as the
/// process lived; now it makes a new one and the POST answers 200, every event billed once.
/// Here `InitProducerId` answers `PRODUCER_FENCED`, which librdkafka raises as a fatal error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatally_fenced_ingest_producer_is_replaced_and_the_post_answers_200() {
    fenced_ingest_producer_is_replaced(RDKafkaApiKey::InitProducerId).await
}

/// The same with `Produce` answering `PRODUCER_FENCED`, as tansu answered every produce
/// after a pause: a failed delivery, no fatal error, and a producer that sends nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ingest_producer_whose_produce_is_fenced_is_replaced_and_the_post_answers_200() {
    fenced_ingest_producer_is_replaced(RDKafkaApiKey::Produce).await
}

async fn fenced_ingest_producer_is_replaced(request: RDKafkaApiKey) {
    let cluster = MockCluster::new(1).unwrap();
    let brokers = cluster.bootstrap_servers();
    cluster.create_topic("usage", 4, 1).unwrap();
    cluster.create_topic("usage.dlq", 1, 1).unwrap();
    cluster.request_errors(
        request,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_PRODUCER_FENCED],
    );
    let t = TestApp::fresh(Db::Postgres).await.with_usage_sink(
        &brokers,
        "usage",
        Duration::from_secs(3),
    );
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    let events = worked_events();
    t.ingest(&events).await;
    // A client's retry of the same batch: accepted, nothing counted twice.
    t.ingest(&events).await;
    let renewals: f64 = metrics_handle()
        .render()
        .lines()
        .find(|l| l.starts_with("gpubill_ingest_producer_renewals_total"))
        .and_then(|l| l.split_whitespace().last()?.parse().ok())
        .unwrap_or(0.0);
    assert!(
        renewals >= 1.0,
        "no producer was renewed: the error was not injected"
    );

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut settings = ConsumerSettings::new(&brokers, "usage");
    settings.dead_letter_topic = Some("usage.dlq".into());
    let consumer = tokio::spawn(billing_kafka::run(
        t.state.store.clone(),
        settings,
        || DEC_2_2026_MS,
        stop_rx,
    ));
    let store = t.state.store.clone();
    wait_for("everything folded", Duration::from_secs(60), async || {
        assert!(!consumer.is_finished(), "the consumer stopped");
        store.log().event_count().await.unwrap() == 9
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(store.log().event_count().await.unwrap(), 9);
    stop_tx.send(true).unwrap();
    consumer.await.unwrap().unwrap();
    let closed = t.close("2026-11").await;
    let issued: Vec<serde_json::Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(&book, &events, "2026-11"));
}
