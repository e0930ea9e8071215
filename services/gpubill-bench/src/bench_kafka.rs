//! `gpubill-bench bench-kafka`: the Kafka pipeline's end-to-end rate against the bare consume rate
//! of the same topic, measured in the same run (issue 4's benchmark), and optionally the lag
//! recovery after the engine stops for a while under a steady produce rate.
//!
//! Needs a broker and PostgreSQL (`./scripts/services.sh postgres kafka` starts both here).
//! Every run uses a new topic, new consumer groups and a new database.

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
const EXAMPLE_BOOK: &str = include_str!("../../../examples/pricebook.toml");

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
    /// Decision latency: probe accounts (one probe every 100 ms).
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
    // The monthly partitions of `events`, as `gpubill serve` makes them.
    store.log().maintain_partitions(now_ms()).await?;
    // Rated as in production: every batch keeps its accounts' provisional costs.
    store.admin().put_pricebook(EXAMPLE_BOOK, now_ms()).await?;
    Ok((topic, db, store))
}

/// The run `args` choose on what [`prepare`] made, other than the soak run (`soak.rs`, which
/// `main.rs` dispatches to): lag recovery, decision latency or throughput.
pub async fn run(
    args: &BenchKafkaArgs,
    topic: &str,
    db: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
    if args.lag_recovery {
        return lag_recovery(args, topic, store).await;
    }
    if args.decision_latency {
        return decision_latency(args, topic, store).await;
    }
    throughput(args, topic, db, store).await
}

/// The throughput run: the fleet produced, the bare consume rate, the engines' end-to-end
/// rate into PostgreSQL and the raw `COPY` of the same identity rows, all on one topic.
async fn throughput(
    args: &BenchKafkaArgs,
    topic: &str,
    db: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
    let events = fleet_events(args.events)?;
    let bytes: usize = events.iter().map(|(_, e)| e.len()).sum();
    println!(
        "{} events, {:.0} MB, keyed by account",
        events.len(),
        bytes as f64 / 1e6
    );
    let producer = producer(&args.brokers)?;
    let t = Instant::now();
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
    let produce = t.elapsed();
    println!(
        "produce:          {:>9.0} events/s ({:.1} s)",
        events.len() as f64 / produce.as_secs_f64(),
        produce.as_secs_f64()
    );

    // Bare consume rate: the same topic, a new group, messages counted and dropped.
    let bare_rate = bare_consume(&args.brokers, topic, events.len()).await?;
    println!(
        "bare consume:     {bare_rate:>9.0} events/s ({:.1} s from the first record)",
        events.len() as f64 / bare_rate
    );

    // The engine: decode, dedupe, ledger, dead letters and offsets into PostgreSQL.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let settings = engine_settings(args, topic);
    let mut engines = vec![(
        store.clone(),
        tokio::spawn(billing_kafka::run(
            store.clone(),
            settings.clone(),
            now_ms,
            stop_rx.clone(),
        )),
    )];
    for _ in 1..args.engines.max(1) {
        let other = Arc::new(
            Store::open(&format!("{}/{db}", args.postgres))
                .await?
                .with_dedupe_horizon(100 * 365 * 86_400)
                .with_ledger_cache_keys(args.ledger_cache_keys),
        );
        let task = billing_kafka::run(other.clone(), settings.clone(), now_ms, stop_rx.clone());
        engines.push((other, tokio::spawn(task)));
    }
    let mut first = None;
    loop {
        let done = folded(&store, topic, args.partitions).await?;
        if done > 0 {
            first.get_or_insert_with(Instant::now);
        }
        if done >= events.len() as i64 {
            break;
        }
        for (_, engine) in &engines {
            anyhow::ensure!(!engine.is_finished(), "an engine stopped");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let e2e = first.map_or(Duration::ZERO, |f| f.elapsed());
    stop_tx.send(true)?;
    for (n, (s, engine)) in engines.into_iter().enumerate() {
        engine.await??;
        println!(
            "engine {n}: waited {:.1} ms for fold locks in all",
            s.fold_lock_wait().as_secs_f64() * 1e3
        );
    }
    let e2e_rate = events.len() as f64 / e2e.as_secs_f64();
    println!(
        "engine end-to-end: {e2e_rate:>8.0} events/s ({:.1} s from the first batch, {} distinct events stored)",
        e2e.as_secs_f64(),
        store.log().event_count().await?
    );
    println!("ratio engine / bare consume: {:.2}", e2e_rate / bare_rate);
    // The raw COPY baseline: the same identity rows into a table shaped like `events`.
    let mut rows = crate::bench_copy::identity_rows(&events);
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert(r.ident));
    let copy = crate::bench_copy::copy_rows(&format!("{}/{db}", args.postgres), &rows).await?;
    let copy_rate = events.len() as f64 / copy.as_secs_f64();
    println!(
        "raw COPY:         {copy_rate:>9.0} events/s ({:.2} s for the {} distinct identity rows, binary COPY, same key and partitions)",
        copy.as_secs_f64(),
        rows.len()
    );
    println!("ratio engine / raw COPY: {:.2}", e2e_rate / copy_rate);
    store.close().await;
    Ok(())
}

/// Steady production at `rate`; the engine runs, stops for `stop_seconds`, restarts; reports
/// how long the lag (records produced and acknowledged but not folded) takes to drain.
async fn lag_recovery(args: &BenchKafkaArgs, topic: &str, store: Arc<Store>) -> anyhow::Result<()> {
    let total_seconds = 10 + args.stop_seconds + 60;
    let events = fleet_events((args.rate * total_seconds) as usize)?;
    let produced = Arc::new(AtomicI64::new(0));
    let production = background(&args.brokers, topic, args.rate, events, produced.clone())?;
    let start_engine = || {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let settings = engine_settings(args, topic);
        (
            stop_tx,
            tokio::spawn(billing_kafka::run(store.clone(), settings, now_ms, stop_rx)),
        )
    };
    let lag = async || -> anyhow::Result<i64> {
        Ok(produced.load(Ordering::Relaxed) - folded(&store, topic, args.partitions).await?)
    };
    let (stop, engine) = start_engine();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Steady state: records produced but not yet folded (linger, the batch in flight).
    let mut steady = Vec::new();
    for _ in 0..50 {
        steady.push(lag().await?);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    steady.sort_unstable();
    println!(
        "steady state at {} events/s: lag p50 {} max {} records",
        args.rate,
        steady[steady.len() / 2],
        steady[steady.len() - 1]
    );
    // Caught up again: lag within half a second of production, the steady state's range.
    let caught_up = (args.rate / 2) as i64;
    stop.send(true)?;
    engine.await??;
    tokio::time::sleep(Duration::from_secs(args.stop_seconds)).await;
    let backlog = lag().await?;
    println!(
        "engine stopped {} s: lag {backlog} records",
        args.stop_seconds
    );
    let restarted = Instant::now();
    let (stop, engine) = start_engine();
    let mut first_fold = None;
    let before = folded(&store, topic, args.partitions).await?;
    let mut max_after = 0;
    loop {
        let l = lag().await?;
        if first_fold.is_none() && folded(&store, topic, args.partitions).await? > before {
            first_fold = Some(restarted.elapsed());
        }
        if l <= caught_up {
            let took = restarted.elapsed();
            println!(
                "lag back to steady state (<= {caught_up} records, 0.5 s of production) {:.1} s after the restart (first batch folded after {:.1} s: the group join)",
                took.as_secs_f64(),
                first_fold.unwrap_or(took).as_secs_f64()
            );
            break;
        }
        max_after = max_after.max(l);
        if std::env::var_os("GPUBILL_BENCH_TRACE").is_some() {
            let mut per = Vec::new();
            for p in 0..args.partitions {
                per.push(
                    store
                        .log()
                        .stored_offset(topic, p as i64)
                        .await?
                        .unwrap_or(0),
                );
            }
            eprintln!(
                "{:>5.1} s lag {l} positions {per:?}",
                restarted.elapsed().as_secs_f64()
            );
        }
        anyhow::ensure!(
            restarted.elapsed() < Duration::from_secs(120),
            "no catch-up in 120 s (lag {l})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And it stays caught up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    println!("3 s later: lag {} records", lag().await?);
    stop.send(true)?;
    engine.await??;
    production.abort();
    // The baseline for this topic, written in small produce batches as node agents do.
    let n = produced.load(Ordering::Relaxed) as usize;
    let rate = bare_consume(&args.brokers, topic, n).await?;
    println!("bare consume of the same topic ({n} records): {rate:.0} events/s");
    store.close().await;
    Ok(())
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Steady background production at `rate` (fleet events, acknowledged ones counted) until
/// the events run out or the task is aborted.
fn background(
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

/// Probe accounts with a 0.01 GPU-hour quota (36 unit-seconds) each get one 60 s usage event,
/// one every 100 ms, while the fleet produces `rate` events/s in the background: each event
/// crosses its account's quota, and the time from handing it to the producer to its `limit`
/// decision being readable (the query `GET /v1/quota/decisions` runs, polled every 2 ms) is
/// one sample.
async fn decision_latency(
    args: &BenchKafkaArgs,
    topic: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
    let quotas: billing_store::Quotas =
        serde_json::from_str(r#"{"gpu_hours":{"gpu.h100-80g":"0.01"}}"#)?;
    for i in 0..args.probes {
        let account = format!("probe-{i}");
        store
            .admin()
            .create_account(&account, &billing_store::hash_key(&account), now_ms())
            .await?;
        store
            .quota()
            .set_quotas(&account, None, &quotas, now_ms())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let seconds = 15 + args.probes as u64 / 10;
    let produced = Arc::new(AtomicI64::new(0));
    let production = background(
        &args.brokers,
        topic,
        args.rate,
        fleet_events((args.rate * seconds) as usize)?,
        produced.clone(),
    )?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let settings = engine_settings(args, topic);
    let engine = tokio::spawn(billing_kafka::run(store.clone(), settings, now_ms, stop_rx));
    // Joined and caught up with the background before the first probe.
    let t0 = Instant::now();
    loop {
        let lag = produced.load(Ordering::Relaxed) - folded(&store, topic, args.partitions).await?;
        if t0.elapsed() > Duration::from_secs(5) && lag < (args.rate / 2) as i64 {
            break;
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(60),
            "the engine did not catch up with the background load in 60 s (lag {lag})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let at_start = (produced.load(Ordering::Relaxed), Instant::now());
    // The poller: when each probe's `limit` decision is first readable.
    let seen: Seen = Default::default();
    let poller = poll_decisions(store.clone(), seen.clone(), args.probes);
    let sent = send_probes(args, topic).await?;
    tokio::time::timeout(Duration::from_secs(60), poller)
        .await
        .context("not every probe's decision was readable within 60 s")???;
    let background_rate =
        (produced.load(Ordering::Relaxed) - at_start.0) as f64 / at_start.1.elapsed().as_secs_f64();
    let seen = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    let mut ms: Vec<f64> = sent
        .iter()
        .map(|(a, at)| (seen[a].duration_since(*at)).as_secs_f64() * 1e3)
        .collect();
    if std::env::var_os("GPUBILL_BENCH_TRACE").is_some() {
        for (i, m) in ms.iter().enumerate() {
            eprintln!("probe {i}: {m:.0} ms");
        }
    }
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() as f64 * p).ceil() as usize).clamp(1, ms.len()) - 1];
    println!(
        "background {background_rate:.0} events/s acknowledged while probing; {} probes",
        ms.len()
    );
    println!(
        "event produced -> limit decision readable: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    stop_tx.send(true)?;
    engine.await??;
    production.abort();
    store.close().await;
    Ok(())
}

/// The instant each probe account's `limit` decision was first readable.
type Seen = Arc<std::sync::Mutex<std::collections::HashMap<String, Instant>>>;

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

/// Polls `limit` decisions every 2 ms until `probes` accounts have one, noting when each was
/// first readable.
fn poll_decisions(
    store: Arc<Store>,
    seen: Seen,
    probes: usize,
) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    tokio::spawn(async move {
        let mut after = 0;
        while seen.lock().map_or(0, |s| s.len()) < probes {
            let got = store
                .quota()
                .quota_decisions(None, None, Some("limit"), after, 1000)
                .await?;
            let now = Instant::now();
            for d in got {
                after = d.seq;
                seen.lock()
                    .map_err(|_| anyhow::anyhow!("poisoned"))?
                    .entry(d.account)
                    .or_insert(now);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        anyhow::Ok(())
    })
}

/// Sends one 60 s usage event per probe account, one every 100 ms, from a producer connected
/// before the first; answers each probe's account and the instant it was handed over.
async fn send_probes(args: &BenchKafkaArgs, topic: &str) -> anyhow::Result<Vec<(String, Instant)>> {
    // The probes' producer, connected (metadata, producer id) before the first probe.
    let producer = producer(&args.brokers)?;
    let warm = r#"{"specversion":"1.0","id":"warm-up","source":"bench/probe","type":"gpu.usage","subject":"warm-up","data":{"lease":"w","resource":"GPU-0","sku":"gpu.h100-80g","start":"2026-11-02T12:00:00Z","end":"2026-11-02T12:00:01Z","quantity":"1"}}"#;
    producer
        .send(
            FutureRecord::to(topic).key("warm-up").payload(warm),
            Duration::from_secs(10),
        )
        .await
        .map_err(|(e, _)| e)?;
    let mut sent = Vec::with_capacity(args.probes);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    for i in 0..args.probes {
        tick.tick().await;
        let account = format!("probe-{i}");
        let event = format!(
            r#"{{"specversion":"1.0","id":"probe-{i}","source":"bench/probe","type":"gpu.usage","subject":"{account}","data":{{"lease":"p{i}","resource":"GPU-0","sku":"gpu.h100-80g","start":"2026-11-02T12:00:00Z","end":"2026-11-02T12:01:00Z","quantity":"1"}}}}"#
        );
        let at = Instant::now();
        let ack = producer
            .send_result(FutureRecord::to(topic).key(&account).payload(&event))
            .map_err(|(e, _)| e)?;
        sent.push((account, at));
        tokio::spawn(ack);
    }
    Ok(sent)
}

/// Reads `n` records of `topic` with a new group, counting them: records per second from
/// the first record on.
async fn bare_consume(brokers: &str, topic: &str, n: usize) -> anyhow::Result<f64> {
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
fn fleet_events(n: usize) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let per_gpu_day = 86_400 / 30 * 11 / 10;
    let spec = FleetSpec {
        gpus: (n / per_gpu_day + 1) as u32,
        accounts: 64,
        ..FleetSpec::default()
    };
    let mut out = Vec::with_capacity(n);
    generate(&spec, |line| {
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

async fn create_topic(brokers: &str, topic: &str, partitions: i32) -> anyhow::Result<()> {
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
