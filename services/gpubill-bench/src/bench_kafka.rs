//! `gpubill-bench bench-kafka`: the Kafka pipeline's end-to-end rate against the bare consume rate
//! of the same topic, measured in the same run (issue 4's benchmark), and optionally the lag
//! recovery after the engine stops for a while under a steady produce rate.
//!
//! Needs a broker and PostgreSQL (`./scripts/services.sh postgres kafka` starts both here).
//! Every run uses a new topic, new consumer groups and a new database.

use crate::kafka_kit::*;
use billing_store::Store;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The run `args` choose on what [`prepare`] made, other than the soak run (`soak.rs`, which
/// `main.rs` dispatches to): lag recovery, decision latency or throughput.
pub async fn run(
    args: &BenchKafkaArgs,
    topic: &str,
    db: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
    if args.lag_recovery {
        return crate::bench_lag::lag_recovery(args, topic, store).await;
    }
    if args.webhook_latency {
        return crate::bench_webhooks::webhook_latency(args, topic, store).await;
    }
    if args.decision_latency {
        return crate::bench_decisions::decision_latency(args, topic, store).await;
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
    let t = Instant::now();
    produce_all(&args.brokers, topic, &events).await?;
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
        "raw COPY:         {copy_rate:>9.0} events/s ({:.2} s for the {} distinct identity rows, binary COPY, same key and indexes)",
        copy.as_secs_f64(),
        rows.len()
    );
    println!("ratio engine / raw COPY: {:.2}", e2e_rate / copy_rate);
    store.close().await;
    Ok(())
}
