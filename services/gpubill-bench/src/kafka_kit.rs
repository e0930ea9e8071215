//! What the Kafka benchmarks share (`bench-kafka`'s throughput, lag recovery and decision
//! latency runs, and the soak): the flags, a fresh topic and database, the producer and the
//! background production, the engine's consumer settings, the bare consume rate, the fleet.

use anyhow::Context;
use billing_kafka::ConsumerSettings;
use billing_store::Store;
use clap::Args;
use gpubill_fleet::{FleetSpec, generate};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// The example price book (examples/pricebook.toml): the generated fleet's SKUs are priced
/// in it.
pub(crate) const EXAMPLE_BOOK: &str = include_str!("../../../examples/pricebook.toml");

#[derive(Args, Debug)]
pub struct BenchKafkaArgs {
    /// Kafka bootstrap servers.
    #[arg(long, default_value = "127.0.0.1:9092")]
    pub brokers: String,
    /// PostgreSQL server (a fresh database is created on it for the run).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
    pub postgres: String,
    /// Events loaded into the topic.
    #[arg(long, default_value_t = 1_000_000)]
    pub events: usize,
    /// Partitions of the topic.
    #[arg(long, default_value_t = 4)]
    pub partitions: i32,
    /// Most records the engine folds in one transaction.
    #[arg(long, default_value_t = 5000)]
    pub batch_max: usize,
    /// Transactions each engine folds a batch in at once (each over its own partitions).
    #[arg(long, default_value_t = 2)]
    pub lanes: usize,
    /// Engines folding the topic together (one consumer group, one database, each its own
    /// store and connections); reports the time each waited for locks.
    #[arg(long, default_value_t = 1)]
    pub engines: usize,
    /// Instead: the lag recovery test (steady produce rate, engine stopped, time to catch up).
    #[arg(long)]
    pub lag_recovery: bool,
    /// Instead: the decision latency (probe accounts cross a quota under a background load of
    /// `--rate` events/s; time from each probe's event being produced to its `limit` decision
    /// being readable).
    #[arg(long)]
    pub decision_latency: bool,
    /// Instead: the webhook latency (issue 28): probe accounts each cross a budget under a
    /// background load of `--rate` events/s; time from each probe's event being produced to
    /// its `budget.crossed` webhook reaching a receiver on 127.0.0.1.
    #[arg(long)]
    pub webhook_latency: bool,
    /// Decision and webhook latency: probe accounts (one probe every 100 ms).
    #[arg(long, default_value_t = 200)]
    pub probes: usize,
    /// Lag recovery and decision latency: background events per second.
    #[arg(long, default_value_t = 10_000)]
    pub rate: u64,
    /// Instead: the soak run, this many seconds of steady production at `--rate` (use
    /// `--rate 20000 --soak-seconds 3600`): resident memory and consumer lag over time.
    #[arg(long)]
    pub soak_seconds: Option<u64>,
    /// Usage keys each engine keeps of ledgers in memory between batches (0: off, every
    /// batch reads the ledgers it re-rates from the database).
    #[arg(long, default_value_t = billing_store::DEFAULT_LEDGER_CACHE_KEYS)]
    pub ledger_cache_keys: usize,
    /// Instead: shards (issue 29, `bench_shards.rs`): a month of usage folded by one shard,
    /// then by this many at once (databases alternating between `--postgres` and
    /// `--postgres-second`), then a move of shard 0's largest tree to shard 1, timed.
    #[arg(long)]
    pub shards: Option<u32>,
    /// The second PostgreSQL server of `--shards` (`scripts/services.sh postgres-second`).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5433")]
    pub postgres_second: String,
    /// Lag recovery: how long the engine stays stopped, in seconds.
    #[arg(long, default_value_t = 30)]
    pub stop_seconds: u64,
}

/// What every run of `gpubill-bench bench-kafka` starts from: a fresh topic and database, and the
/// store on that database with the demo price book. Answers (topic, database, store).
pub async fn prepare(args: &BenchKafkaArgs) -> anyhow::Result<(String, String, Arc<Store>)> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let topic = format!("gpubill-bench-{stamp}");
    create_topic(&args.brokers, &topic, args.partitions).await?;
    let db = format!("gpubill_bench_{stamp}");
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&format!("{}/postgres", args.postgres))
            .await
            .with_context(|| format!("PostgreSQL at {}", args.postgres))?;
        sqlx::query(&format!("create database {db}"))
            .execute(&mut conn)
            .await?;
    }
    // The generated fleet is dated November 2026: a century of dedupe horizon keeps the
    // benchmark folding it whenever it runs (the figures are of the fold, not of refusals).
    let store = Arc::new(
        Store::open(&format!("{}/{db}", args.postgres))
            .await?
            .with_dedupe_horizon(100 * 365 * 86_400)
            .with_ledger_cache_keys(args.ledger_cache_keys),
    );
    println!(
        "topic {topic} ({} partitions), database {db}, {} cores",
        args.partitions,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    // Rated as in production: every batch keeps its accounts' provisional costs.
    store.admin().put_pricebook(EXAMPLE_BOOK, now_ms()).await?;
    Ok((topic, db, store))
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Steady background production at `rate` (fleet events, acknowledged ones counted) until
/// the events run out or the task is aborted.
pub(crate) fn background(
    brokers: &str,
    topic: &str,
    rate: u64,
    events: Vec<(String, Vec<u8>)>,
    produced: Arc<AtomicI64>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let producer = producer(brokers)?;
    let topic = topic.to_string();
    Ok(tokio::spawn(async move {
        // Every 10 ms, the next rate/100 events.
        let per_tick = (rate / 100).max(1) as usize;
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        for chunk in events.chunks(per_tick) {
            tick.tick().await;
            let acks: Vec<_> = chunk
                .iter()
                .filter_map(|(k, e)| {
                    producer
                        .send_result(FutureRecord::to(&topic).key(k).payload(e))
                        .ok()
                })
                .collect();
            let count = produced.clone();
            tokio::spawn(async move {
                for a in acks {
                    if matches!(a.await, Ok(Ok(_))) {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    }))
}

/// The engine's consumer settings of every benchmark run: the run's own group, its batch
/// size and lanes, no dead-letter relay.
pub(crate) fn engine_settings(args: &BenchKafkaArgs, topic: &str) -> ConsumerSettings {
    let mut settings = ConsumerSettings::new(&args.brokers, topic);
    settings.group = format!("{topic}-engine");
    settings.batch_max = args.batch_max;
    settings.lanes = args.lanes.max(1);
    settings.dead_letter_topic = None;
    settings
}

/// Reads `n` records of `topic` with a new group, counting them: records per second from
/// the first record on.
pub(crate) async fn bare_consume(brokers: &str, topic: &str, n: usize) -> anyhow::Result<f64> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", format!("{topic}-bare"))
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500")
        .create()?;
    consumer.subscribe(&[topic])?;
    let mut first = None;
    for _ in 0..n {
        let m = tokio::time::timeout(Duration::from_secs(60), consumer.recv())
            .await
            .context("bare consumer: nothing for 60 s")??;
        first.get_or_insert_with(Instant::now);
        std::hint::black_box(m.payload());
    }
    Ok(n as f64 / first.map_or(Duration::ZERO, |f| f.elapsed()).as_secs_f64())
}

/// `n` fleet events (64 accounts, 8-GPU leases, 30 s heartbeats, 10% redeliveries, egress),
/// each with its account as the key.
pub(crate) fn fleet_events(n: usize) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let per_gpu_day = 86_400 / 30 * 11 / 10;
    let spec = FleetSpec {
        gpus: (n / per_gpu_day + 1) as u32,
        accounts: 64,
        ..FleetSpec::default()
    };
    keyed_fleet(&spec, n)
}

/// The first `n` events of the fleet `spec`, each keyed by its account.
pub(crate) fn keyed_fleet(spec: &FleetSpec, n: usize) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::with_capacity(n);
    generate(spec, |line| {
        if out.len() < n {
            let subject = line
                .split("\"subject\":\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string();
            out.push((subject, line.as_bytes().to_vec()));
        }
    })?;
    Ok(out)
}

/// Produces every event keyed as given, waiting for each acknowledgement (50,000 in flight).
pub(crate) async fn produce_all(
    brokers: &str,
    topic: &str,
    events: &[(String, Vec<u8>)],
) -> anyhow::Result<()> {
    let producer = producer(brokers)?;
    for chunk in events.chunks(50_000) {
        let mut acks = Vec::with_capacity(chunk.len());
        for (key, e) in chunk {
            acks.push(
                producer
                    .send_result(FutureRecord::to(topic).key(key).payload(e))
                    .map_err(|(e, _)| e)?,
            );
        }
        for a in acks {
            a.await?.map_err(|(e, _)| e)?;
        }
    }
    Ok(())
}

pub(crate) fn producer(brokers: &str) -> anyhow::Result<FutureProducer> {
    Ok(ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "10")
        .set("queue.buffering.max.messages", "1000000")
        .set("message.timeout.ms", "60000")
        .create()?)
}

pub(crate) async fn create_topic(
    brokers: &str,
    topic: &str,
    partitions: i32,
) -> anyhow::Result<()> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()?;
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
            &options,
        )
        .await
        .with_context(|| format!("Kafka at {brokers}"))?
    {
        r.map_err(|(t, e)| anyhow::anyhow!("create topic {t}: {e}"))?;
    }
    Ok(())
}

/// Records the engine has folded: the stored positions of the topic's partitions.
pub(crate) async fn folded(store: &Store, topic: &str, partitions: i32) -> anyhow::Result<i64> {
    let mut sum = 0;
    for p in 0..partitions {
        sum += store
            .log()
            .stored_offset(topic, p as i64)
            .await?
            .unwrap_or(0);
    }
    Ok(sum)
}
