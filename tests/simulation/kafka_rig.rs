//! Kafka mode of the simulation: librdkafka's in-process mock cluster as the broker, so that
//! the broker can be taken down at a point the seed chooses. The HTTP ingest hands records to
//! the usage topic (`billing_kafka::UsageSink`), the engine's consumer folds them
//! (`billing_kafka::run`) and its outbox relay publishes the commands (`billing_kafka::relay`);
//! at the end, `billing_kafka::replay` rebuilds a fresh database from the topics.

use billing_kafka::{ConsumerSettings, KafkaError, ReplaySettings};
use billing_store::{Store, Topics};
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub const USAGE: &str = "usage";
const PARTITIONS: i32 = 4;

pub struct Rig {
    cluster: MockCluster<'static, DefaultProducerContext>,
    pub brokers: String,
    /// While the broker is down: failed requests left before it comes back.
    down_left: Option<u32>,
    pub outages: u64,
}

/// The engine's Kafka tasks of one engine lifetime.
pub struct Workers {
    stop: watch::Sender<bool>,
    consumer: JoinHandle<Result<(), KafkaError>>,
    relay: JoinHandle<Result<(), KafkaError>>,
}

impl Rig {
    pub fn new() -> Rig {
        let cluster = MockCluster::new(1).unwrap();
        let brokers = cluster.bootstrap_servers();
        cluster.create_topic(USAGE, PARTITIONS, 1).unwrap();
        for t in ["usage.dlq", "commands", "invoices", "quota"] {
            cluster.create_topic(t, 1, 1).unwrap();
        }
        Rig {
            cluster,
            brokers,
            down_left: None,
            outages: 0,
        }
    }

    pub fn topics() -> Topics {
        Topics {
            commands: "commands".into(),
            invoices: "invoices".into(),
            quota: "quota".into(),
            notifications: "notifications".into(),
        }
    }

    /// The ingest's hand-off: a short delivery bound, so a request during an outage answers
    /// 503 quickly (the client retries it).
    pub fn sink(&self) -> Arc<dyn billing_api::EventSink> {
        Arc::new(
            billing_kafka::UsageSink::new(&self.brokers, USAGE, Duration::from_millis(300))
                .unwrap(),
        )
    }

    pub fn start(&self, store: Arc<Store>, clock: billing_api::Clock) -> Workers {
        let (stop, stop_rx) = watch::channel(false);
        let mut settings = ConsumerSettings::new(&self.brokers, USAGE);
        settings.dead_letter_topic = Some("usage.dlq".into());
        settings.linger = Duration::from_millis(5);
        // After an outage, reconnect within half a second (librdkafka backs off up to 10 s).
        settings.client_overrides = [
            ("reconnect.backoff.max.ms", "500"),
            ("retry.backoff.ms", "20"),
            ("retry.backoff.max.ms", "200"),
            ("topic.metadata.refresh.interval.ms", "1000"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec();
        if let Ok(d) = std::env::var("SIM_RDKAFKA_DEBUG") {
            settings.client_overrides.push(("debug".into(), d));
        }
        let c = clock.clone();
        let consumer = tokio::spawn(billing_kafka::run(
            store.clone(),
            settings,
            move || c(),
            stop_rx.clone(),
        ));
        let brokers = self.brokers.clone();
        let relay = tokio::spawn(async move {
            billing_kafka::relay(store, &brokers, move || clock(), stop_rx).await
        });
        Workers {
            stop,
            consumer,
            relay,
        }
    }

    /// The broker goes away until `failures` requests have failed on it.
    pub fn down(&mut self, failures: u32) {
        if self.down_left.is_none() {
            self.cluster.broker_down(1).unwrap();
            self.outages += 1;
        }
        self.down_left = Some(failures);
    }

    /// A request failed: the outage may end.
    pub fn failed(&mut self) {
        if let Some(n) = self.down_left.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.up();
            }
        }
    }

    pub fn up(&mut self) {
        if self.down_left.take().is_some() {
            self.cluster.broker_up(1).unwrap();
        }
    }

    /// Whether the consumer stored every partition's end as its next offset.
    pub async fn caught_up(&self, store: &Store) -> bool {
        let brokers = self.brokers.clone();
        let ends = tokio::task::spawn_blocking(move || {
            let c: BaseConsumer = ClientConfig::new()
                .set("bootstrap.servers", &brokers)
                .create()
                .unwrap();
            (0..PARTITIONS)
                .map(|p| {
                    c.fetch_watermarks(USAGE, p, Duration::from_secs(5))
                        .map(|(_, high)| high)
                })
                .collect::<Result<Vec<i64>, _>>()
        })
        .await
        .unwrap();
        if std::env::var_os("SIM_DEBUG").is_some() {
            let mut stored = Vec::new();
            for p in 0..PARTITIONS {
                stored.push(
                    store
                        .log()
                        .stored_offset(USAGE, p as i64)
                        .await
                        .ok()
                        .flatten(),
                );
            }
            eprintln!(
                "sim: {:?} ends {ends:?} stored {stored:?}",
                std::time::SystemTime::now()
            );
        }
        let Ok(ends) = ends else { return false };
        for (p, end) in ends.into_iter().enumerate() {
            let stored = store
                .log()
                .stored_offset(USAGE, p as i64)
                .await
                .ok()
                .flatten();
            if end > 0 && stored != Some(end) {
                return false;
            }
        }
        true
    }

    /// Rebuilds `into` (empty) from the topics.
    pub async fn replay(&self, into: Arc<Store>, now_ms: i64) -> billing_kafka::ReplayReport {
        let mut settings = ReplaySettings::new(&self.brokers, USAGE, "commands");
        settings.settle = Duration::from_millis(300);
        billing_kafka::replay(into, settings, move || now_ms)
            .await
            .unwrap()
    }
}

impl Workers {
    /// The consumer or the relay stopped on an error: the engine died (a supervisor
    /// restarts it).
    pub fn died(&self) -> bool {
        self.consumer.is_finished() || self.relay.is_finished()
    }

    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in [self.consumer, self.relay] {
            match tokio::time::timeout(Duration::from_secs(30), task).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => panic!("an engine task panicked: {e}"),
                Err(_) => panic!("an engine task does not stop"),
            }
        }
    }
}
