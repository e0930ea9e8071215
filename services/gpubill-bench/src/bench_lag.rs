//! `gpubill-bench bench-kafka --lag-recovery`: the lag after the engine stops for a while under
//! a steady produce rate, and how fast it recovers.

use crate::kafka_kit::*;
use billing_store::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Steady production at `rate`; the engine runs, stops for `stop_seconds`, restarts; reports
/// how long the lag (records produced and acknowledged but not folded) takes to drain.
pub(crate) async fn lag_recovery(
    args: &BenchKafkaArgs,
    topic: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
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
