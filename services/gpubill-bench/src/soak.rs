//! `gpubill-bench bench-kafka --soak-seconds N [--rate R]`: the soak run of issue 11. Produces `R`
//! usage events a second (default 20,000) for `N` seconds, generated as it goes (nothing is
//! held in memory ahead), while the engine folds them into PostgreSQL in the same process;
//! every 10 s it samples the process's resident memory and the consumer lag (records produced
//! and acknowledged but not yet folded), prints a line a minute and a summary: whether memory
//! and lag stayed flat. A documented command, not part of CI (README, "Benchmarks").
//!
//! The fleet: `R x 30` resources (each heartbeats every 30 s, so every key stays active),
//! spread over 1,000 accounts, each heartbeat a 30 s `gpu.usage` event ending at the clock.

use billing_store::Store;
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// One heartbeat of the soak fleet: the `n`th event (key, record).
fn heartbeat(n: u64, resources: u64, base_s: i64) -> (String, Vec<u8>) {
    let r = n % resources;
    let beat = (n / resources) as i64;
    let account = format!("soak-{:03}", r % 1000);
    let at = |s: i64| {
        chrono::DateTime::from_timestamp(s, 0)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let start = base_s + beat * 30;
    // Written out rather than built as a `serde_json::Value`: the generator shares the two
    // cores with the engine it measures (every value here is plain ASCII, nothing to escape).
    let record = format!(
        concat!(
            r#"{{"specversion":"1.0","id":"soak-{n}","source":"node/{node}","type":"gpu.usage","#,
            r#""subject":"{account}","data":{{"lease":"L{node}","resource":"g{r}","#,
            r#""sku":"gpu.h100-80g","start":"{start}","end":"{end}"}}}}"#
        ),
        n = n,
        node = r / 8,
        account = account,
        r = r,
        start = at(start),
        end = at(start + 30),
    );
    (account, record.into_bytes())
}

/// The process's resident memory in bytes (Linux `/proc/self/status`), 0 elsewhere.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}

/// Produces at `rate` until `stop`, counting acknowledged records in `produced`.
fn produce(
    producer: FutureProducer,
    topic: String,
    rate: u64,
    base_s: i64,
    produced: Arc<AtomicI64>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let resources = (rate * 30).max(1);
        let per_tick = (rate / 100).max(1);
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        let mut n = 0u64;
        loop {
            tick.tick().await;
            let mut acks = Vec::with_capacity(per_tick as usize);
            for _ in 0..per_tick {
                let (key, record) = heartbeat(n, resources, base_s);
                n += 1;
                if let Ok(ack) =
                    producer.send_result(FutureRecord::to(&topic).key(&key).payload(&record))
                {
                    acks.push(ack);
                }
            }
            let count = produced.clone();
            tokio::spawn(async move {
                for a in acks {
                    if matches!(a.await, Ok(Ok(_))) {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    })
}

/// One sample: seconds since the start, resident bytes, lag in records.
type Sample = (f64, u64, i64);

pub async fn soak(
    args: &crate::kafka_kit::BenchKafkaArgs,
    topic: &str,
    store: Arc<Store>,
    seconds: u64,
) -> anyhow::Result<()> {
    let rate = args.rate;
    let base_s = crate::kafka_kit::now_ms() / 1000 - 30;
    let produced = Arc::new(AtomicI64::new(0));
    let production = produce(
        crate::kafka_kit::producer(&args.brokers)?,
        topic.to_string(),
        rate,
        base_s,
        produced.clone(),
    );
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let settings = crate::kafka_kit::engine_settings(args, topic);
    let engine = tokio::spawn(billing_kafka::run(
        store.clone(),
        settings,
        crate::kafka_kit::now_ms,
        stop_rx,
    ));
    println!(
        "soak: {rate} events/s for {seconds} s, {} resources over 1,000 accounts",
        rate * 30
    );
    println!("  elapsed   produced     folded      lag   resident");
    let t0 = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    while t0.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(10)).await;
        anyhow::ensure!(!engine.is_finished(), "the engine stopped");
        let p = produced.load(Ordering::Relaxed);
        let f = crate::kafka_kit::folded(&store, topic, args.partitions).await?;
        let s = (t0.elapsed().as_secs_f64(), resident_bytes(), p - f);
        if samples.len() % 6 == 5 || t0.elapsed() >= Duration::from_secs(seconds) {
            println!(
                "  {:>6.0} s {p:>10} {f:>10} {:>8} {:>7.1} MB",
                s.0,
                s.2,
                s.1 as f64 / 1e6
            );
        }
        samples.push(s);
    }
    production.abort();
    stop_tx.send(true)?;
    engine.await??;
    summarize(&samples, rate);
    Ok(())
}

/// Memory and lag of the first and the last quarter after the first minute (the warm-up).
fn summarize(samples: &[Sample], rate: u64) {
    let warm: Vec<&Sample> = samples.iter().filter(|s| s.0 > 60.0).collect();
    if warm.len() < 4 {
        println!("  too short for a summary (run at least 2 minutes)");
        return;
    }
    let q = warm.len() / 4;
    let (first, last) = (&warm[..q.max(1)], &warm[warm.len() - q.max(1)..]);
    let mean =
        |v: &[&Sample], f: fn(&Sample) -> f64| v.iter().map(|s| f(s)).sum::<f64>() / v.len() as f64;
    let rss = |s: &Sample| s.1 as f64 / 1e6;
    let lag = |s: &Sample| s.2 as f64;
    let max_lag = warm.iter().map(|s| s.2).max().unwrap_or(0);
    println!(
        "  resident: first quarter {:.1} MB, last quarter {:.1} MB; lag: first quarter {:.0}, last quarter {:.0} records (max {max_lag}, {:.2} s of production)",
        mean(first, rss),
        mean(last, rss),
        mean(first, lag),
        mean(last, lag),
        max_lag as f64 / rate.max(1) as f64
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_heartbeat_is_the_cloud_event_it_names() {
        let (account, bytes) = super::heartbeat(1_000_017, 1_000_000, 1_796_083_200);
        assert_eq!(account, "soak-017");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("a heartbeat is JSON");
        assert_eq!(v["id"], "soak-1000017");
        assert_eq!(v["source"], "node/2");
        assert_eq!(v["subject"], "soak-017");
        assert_eq!(v["data"]["resource"], "g17");
        assert_eq!(v["data"]["lease"], "L2");
        // The second beat of resource 17: 30 s after the fleet's base.
        assert_eq!(v["data"]["start"], "2026-12-01T00:00:30Z");
        assert_eq!(v["data"]["end"], "2026-12-01T00:01:00Z");
    }
}
