//! The Kafka pipeline against a real broker (tansu on 127.0.0.1:9092, started by
//! ./scripts/test) and real PostgreSQL.

use billing_kafka::ConsumerSettings;
use gpubill_tests::*;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::time::Duration;

const BROKERS: &str = "127.0.0.1:9092";

async fn topic_with_partitions(partitions: i32) -> String {
    let name = format!(
        "gpu.usage.test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", BROKERS)
        .create()
        .unwrap();
    let results = admin
        .create_topics(&[NewTopic::new(&name, partitions, TopicReplication::Fixed(1))], &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))))
        .await
        .unwrap_or_else(|e| panic!("Kafka (tansu) is not reachable at {BROKERS} ({e}): run the tests with ./scripts/test, which starts it"));
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("create topic {t}: {e}"));
    }
    name
}

async fn produce(topic: &str, records: &[(i32, String)]) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", BROKERS)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("message.timeout.ms", "20000")
        .create()
        .unwrap();
    for (partition, payload) in records {
        producer
            .send(
                FutureRecord::to(topic)
                    .partition(*partition)
                    .key("k")
                    .payload(payload),
                Duration::from_secs(20),
            )
            .await
            .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}"));
    }
}

/// Runs the consumer until the store holds `events` events (or fails after 90 s).
async fn consume_until(t: &TestApp, topic: &str, events: i64) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let store = t.state.store.clone();
    let settings = ConsumerSettings::new(BROKERS, topic);
    let task = tokio::spawn(billing_kafka::run(
        store,
        settings,
        || DEC_2_2026_MS,
        stop_rx,
    ));
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while t.state.store.event_count().await.unwrap() < events {
        assert!(!task.is_finished(), "consumer stopped: {:?}", task.await);
        assert!(
            std::time::Instant::now() < deadline,
            "consumer did not fold {events} events in 90 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop_tx.send(true).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shuffled_redelivered_events_across_4_partitions_bill_like_gpubill_rate() {
    let topic = topic_with_partitions(4).await;
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
    let dead = t.state.store.dead_letters(0, 10).await.unwrap();
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

    // A second consumer of the same group on the same database starts from the stored offsets:
    // nothing is folded twice.
    produce(&topic, &[(1, events[0].replace("\"a1\"", "\"a1-late\""))]).await;
    consume_until(&t, &topic, 10).await;
    assert_eq!(t.state.store.event_count().await.unwrap(), 10);
}
