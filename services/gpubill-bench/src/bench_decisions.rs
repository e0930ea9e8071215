//! `gpubill-bench bench-kafka --decision-latency`: how long after its usage is produced a
//! quota decision reaches the quota topic.

use crate::kafka_kit::*;
use anyhow::Context;
use billing_store::Store;
use rdkafka::producer::FutureRecord;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Probe accounts with a 0.01 GPU-hour quota (36 unit-seconds) each get one 60 s usage event,
/// one every 100 ms, while the fleet produces `rate` events/s in the background: each event
/// crosses its account's quota, and the time from handing it to the producer to its `limit`
/// decision being readable (the query `GET /v1/quota/decisions` runs, polled every 2 ms) is
/// one sample.
pub(crate) async fn decision_latency(
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
    let load = under_load(args, topic, store.clone()).await?;
    let (produced, at_start) = (
        load.produced.clone(),
        (load.produced.load(Ordering::Relaxed), Instant::now()),
    );
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
    load.stop().await?;
    store.close().await;
    Ok(())
}

/// The engine folding `topic` into `store` while the fleet is produced at `args.rate`
/// events/s in the background, caught up with it ([`under_load`]).
pub(crate) struct UnderLoad {
    /// Records produced so far.
    pub(crate) produced: Arc<AtomicI64>,
    production: tokio::task::JoinHandle<()>,
    stop_tx: tokio::sync::watch::Sender<bool>,
    engine: tokio::task::JoinHandle<Result<(), billing_kafka::KafkaError>>,
}

impl UnderLoad {
    /// Stops the engine and the background production.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.stop_tx.send(true)?;
        self.engine.await??;
        self.production.abort();
        Ok(())
    }
}

/// Starts the background production (enough for the probes of `args`) and the engine, and
/// waits until the engine has joined and caught up with the background.
pub(crate) async fn under_load(
    args: &BenchKafkaArgs,
    topic: &str,
    store: Arc<Store>,
) -> anyhow::Result<UnderLoad> {
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
    Ok(UnderLoad {
        produced,
        production,
        stop_tx,
        engine,
    })
}

/// The instant each probe account's `limit` decision was first readable.
type Seen = Arc<std::sync::Mutex<std::collections::HashMap<String, Instant>>>;

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
pub(crate) async fn send_probes(
    args: &BenchKafkaArgs,
    topic: &str,
) -> anyhow::Result<Vec<(String, Instant)>> {
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
    // Dropping the producer with the last probe still queued loses it: flush first.
    rdkafka::producer::Producer::flush(&producer, Duration::from_secs(10))?;
    Ok(sent)
}
