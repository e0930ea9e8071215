//! `gpubill-bench bench-kafka --webhook-latency` (issue 28): how long after its usage is
//! produced a budget crossing reaches a webhook receiver, under background load.

use crate::kafka_kit::*;
use anyhow::Context;
use billing_store::{NewEndpoint, SqlOutbox, Store};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When each account's first webhook reached the receiver.
type Arrived = Arc<Mutex<HashMap<String, Instant>>>;

/// A receiver on 127.0.0.1 (a free port) noting when each account's first delivery arrives
/// (the body's `account`); answers 204. Its URL.
async fn receiver(arrived: Arrived) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let arrived = arrived.clone();
            async move {
                let now = Instant::now();
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
                    && let Some(account) = v["account"].as_str()
                    && let Ok(mut seen) = arrived.lock()
                {
                    seen.entry(account.to_string()).or_insert(now);
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

/// Probe accounts, each with a budget of 0.01 at 100 % and a webhook endpoint for
/// `budget.crossed` to the receiver, get one 60 s usage event each, one every 100 ms, while
/// the fleet produces `rate` events/s in the background: each crosses its budget, and the
/// time from handing the event to the producer to the webhook's arrival is one sample. The
/// engine folds and the delivery worker (the store's outbox, polled as `serve` does) runs
/// in this process, as in `serve`.
pub(crate) async fn webhook_latency(
    args: &BenchKafkaArgs,
    topic: &str,
    store: Arc<Store>,
) -> anyhow::Result<()> {
    let arrived: Arrived = Default::default();
    let url = receiver(arrived.clone()).await?;
    let policy = billing_webhooks::target::AddressPolicy::allowing(vec!["127.0.0.1/32".parse()?]);
    for i in 0..args.probes {
        let account = format!("probe-{i}");
        store
            .admin()
            .create_account(&account, &billing_store::hash_key(&account), now_ms())
            .await?;
        let budget = billing_core::notify::Budget {
            id: "b".into(),
            account: account.clone(),
            scope: billing_core::notify::BudgetScope::Account(account.clone()),
            amount: rust_decimal::Decimal::new(1, 2),
            thresholds: vec![rust_decimal::Decimal::ONE_HUNDRED],
            forecast: false,
            action: billing_core::notify::BudgetAction::Notify,
        };
        store
            .notify()
            .change_settings(
                &account,
                move |s| {
                    s.budgets.insert("b".into(), budget);
                    Ok(())
                },
                now_ms(),
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        store
            .webhooks()
            .create(
                Some(&account),
                NewEndpoint {
                    url: url.clone(),
                    description: None,
                    event_types: Some(vec!["budget.crossed".into()]),
                },
                &policy,
                now_ms(),
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let load = crate::bench_decisions::under_load(args, topic, store.clone()).await?;
    let produced = load.produced.clone();
    let worker = billing_webhooks::deliver::Worker::new(
        Arc::new(SqlOutbox::new(store.clone())),
        Arc::new(billing_webhooks::clock::SystemClock),
        Box::new(billing_webhooks::clock::OsRandom),
        policy,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (worker_stop, mut worker_rx) = tokio::sync::watch::channel(false);
    let delivering = tokio::spawn(async move {
        worker
            .run(async move {
                let _ = worker_rx.wait_for(|s| *s).await;
            })
            .await;
    });
    let at_start = (produced.load(Ordering::Relaxed), Instant::now());
    let sent = crate::bench_decisions::send_probes(args, topic).await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while arrived.lock().map_or(0, |a| a.len()) < args.probes {
        anyhow::ensure!(
            Instant::now() < deadline,
            "not every probe's webhook arrived within 60 s ({} of {})",
            arrived.lock().map_or(0, |a| a.len()),
            args.probes
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let background_rate =
        (produced.load(Ordering::Relaxed) - at_start.0) as f64 / at_start.1.elapsed().as_secs_f64();
    let arrived = arrived
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    let mut ms: Vec<f64> = sent
        .iter()
        .map(|(a, at)| {
            arrived
                .get(a)
                .map(|t| t.duration_since(*at).as_secs_f64() * 1e3)
                .context("a probe without a webhook")
        })
        .collect::<anyhow::Result<_>>()?;
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() as f64 * p).ceil() as usize).clamp(1, ms.len()) - 1];
    println!(
        "background {background_rate:.0} events/s acknowledged while probing; {} probes",
        ms.len()
    );
    println!(
        "event produced -> budget.crossed webhook received: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    worker_stop.send(true)?;
    delivering.await?;
    load.stop().await?;
    store.close().await;
    Ok(())
}
