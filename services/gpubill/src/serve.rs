//! `gpubill serve`: the persistent engine with its HTTP API, and `gpubill migrate`.
//!
//! Settings come from defaults, then an optional TOML file (`--config`), then the environment
//! (`GPUBILL__DATA_DIR`, `GPUBILL__DATABASE__URL`, `GPUBILL__LISTEN`, `GPUBILL__PRICES`,
//! `GPUBILL_INGEST_TOKEN`, `GPUBILL_ADMIN_TOKEN`), then flags. Secrets never print.

pub use crate::settings::*;
use anyhow::Context;
use billing_api::{AppState, router, system_clock};
use billing_store::{Store, hash_key};
use clap::Args;
use std::sync::Arc;

/// A running application: the store and the state the router serves.
pub struct Application {
    pub state: AppState,
    pub admin_token: Secret,
    pub admin_token_is_new: bool,
}

impl Application {
    /// Opens the store (migrating it), catches the engine up with its log, and uploads
    /// `--prices` when it is not the latest version already.
    pub async fn build(settings: &Settings) -> anyhow::Result<Application> {
        std::fs::create_dir_all(&settings.data_dir)
            .with_context(|| format!("cannot create data dir {}", settings.data_dir.display()))?;
        let store = Store::open(settings.database_url.expose())
            .await
            .context("cannot open the database")?
            .with_topics(settings.topics.clone())
            .with_max_future(settings.max_future_s)
            .with_dedupe_horizon(settings.dedupe_horizon_s)
            .with_durable_holds(settings.durable_holds)
            .with_ledger_cache_keys(settings.ledger_cache_keys);
        let store = crate::settings::with_numbering(
            store,
            &settings.invoice_prefix,
            &settings.credit_note_prefix,
            &settings.region_prefixes,
        )?;
        let store = crate::settings::as_shard(store, settings.shard)
            .with_payment_days(settings.payment_days)
            .map_err(|e| anyhow::anyhow!("--payment-days: {e}"))?
            .with_topup_settlement(settings.topup_settlement);
        let clock = system_clock();
        let caught_up = store.log().catch_up(clock()).await?;
        if caught_up > 0 {
            tracing::info!(
                records = caught_up,
                "folded log records left from a previous run"
            );
        }
        if let Some(p) = &settings.prices {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read price book {}", p.display()))?;
            // The stored text only: compiling every version to compare would cost each one's
            // memory at every start (issue 24.9).
            let latest = store.admin().uploaded_pricebook(None).await?;
            if latest.is_none_or(|v| v.toml != text) {
                let v = store
                    .admin()
                    .put_pricebook(&text, clock())
                    .await
                    .with_context(|| format!("invalid price book {}", p.display()))?;
                tracing::info!(version = v, "uploaded price book");
            }
        }
        let (admin_token, admin_token_is_new) = admin_token(settings)?;
        let state = AppState {
            store: Arc::new(store),
            admin_token_hash: hash_key(admin_token.expose()),
            ingest_token_hash: settings.ingest_token.as_ref().map(|t| hash_key(t.expose())),
            clock,
            metrics: metrics_exporter_prometheus::PrometheusBuilder::new()
                .install_recorder()
                .ok(),
            sink: match &settings.kafka_brokers {
                Some(b) => Some(Arc::new(billing_kafka::UsageSink::new(
                    b,
                    &settings.usage_topic,
                    std::time::Duration::from_secs(5),
                )?)),
                None => None,
            },
            limiter: Arc::new(billing_api::limits::RateLimiter::new(settings.rate_limits)),
            usage_answers: Default::default(),
            webhook_policy: Arc::new(settings.webhook_policy.clone()),
            shards: match (settings.shard, &settings.shard_directory) {
                (Some(shard), Some(url)) => {
                    let directory = billing_store::shard::directory::Directory::open(url.expose())
                        .await
                        .context("cannot open the shard directory")?;
                    Some(Arc::new(billing_api::shards::ShardRoutes::new(
                        shard, directory,
                    )))
                }
                _ => None,
            },
        };
        Ok(Application {
            state,
            admin_token,
            admin_token_is_new,
        })
    }
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let settings = Settings::resolve(&args)?;
    if let Some(brokers) = &settings.kafka_brokers {
        ensure_topics(brokers, &settings, &args).await?;
    }
    let app = Application::build(&settings).await?;
    if app.admin_token_is_new {
        eprintln!(
            "gpubill: generated the admin token (kept in {}): {}",
            settings.data_dir.join("admin-token").display(),
            app.admin_token.expose()
        );
    }
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .with_context(|| format!("cannot listen on {}", settings.listen))?;
    tracing::info!(addr = %listener.local_addr()?, "gpubill serving");
    eprintln!("gpubill: serving on http://{}", listener.local_addr()?);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let notify_tick = spawn_notify_tick(&app, args.notify.notify_tick_seconds);
    let webhooks = (!args.notify.no_webhook_worker)
        .then(|| spawn_webhook_worker(&app, &settings, stop_tx.subscribe()))
        .transpose()?;
    let closer = args.closing.close_grace.map(|grace_s| {
        let check = std::time::Duration::from_secs(args.closing.close_check_seconds);
        crate::autoclose::spawn(
            app.state.store.clone(),
            app.state.clock.clone(),
            grace_s,
            check,
        )
    });
    let consumer = args
        .kafka
        .kafka_brokers
        .as_ref()
        .map(|brokers| spawn_consumer(brokers, &args, &app, stop_rx));
    let relay = args
        .kafka
        .kafka_brokers
        .as_ref()
        .map(|brokers| spawn_relay(brokers, &app, stop_tx.subscribe()));
    billing_api::limits::serve(
        listener,
        router(app.state.clone()),
        args.limits.server_limits(),
        shutdown_signal(),
    )
    .await?;
    let _ = stop_tx.send(true);
    if let Some(tick) = notify_tick {
        tick.abort();
    }
    if let Some(worker) = webhooks {
        let _ = worker.await;
    }
    if let Some(closer) = closer {
        closer.abort();
    }
    for task in [consumer, relay].into_iter().flatten() {
        task.await??;
    }
    app.state.store.close().await;
    Ok(())
}

/// Before anything writes to them: a topic auto-created by its first use gets the broker's
/// default partitions (issue 24, item 10).
async fn ensure_topics(brokers: &str, settings: &Settings, args: &ServeArgs) -> anyhow::Result<()> {
    let plan = billing_kafka::TopicPlan {
        usage: vec![settings.usage_topic.clone()],
        usage_partitions: args.kafka.usage_partitions,
        commands: settings.topics.commands.clone(),
        outputs: vec![
            settings.topics.invoices.clone(),
            settings.topics.quota.clone(),
            args.kafka.dead_letter_topic.clone(),
        ],
    };
    billing_kafka::ensure_topics(brokers, &plan).await?;
    Ok(())
}

/// Every `seconds` (0: never): `store.notify().tick(now)`, the arrears steps, balance alerts
/// and reminders that came due.
fn spawn_notify_tick(app: &Application, seconds: u64) -> Option<tokio::task::JoinHandle<()>> {
    if seconds == 0 {
        return None;
    }
    let (store, clock) = (app.state.store.clone(), app.state.clock.clone());
    Some(tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(seconds));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            match store.notify().tick(clock()).await {
                Ok(t) => tracing::debug!(accounts = t.accounts, "notifications tick"),
                Err(e) => tracing::error!(error = %e, "the notifications tick failed"),
            }
        }
    }))
}

/// The webhook delivery worker over the store's outbox (issue 28), until `stop`: every due
/// head attempted at once, then a wait of ~200 ms when nothing was due.
fn spawn_webhook_worker(
    app: &Application,
    settings: &Settings,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    use billing_webhooks::clock::{OsRandom, SystemClock};
    let outbox = Arc::new(billing_store::SqlOutbox::new(app.state.store.clone()));
    let worker = billing_webhooks::deliver::Worker::new(
        outbox,
        Arc::new(SystemClock),
        Box::new(OsRandom),
        settings.webhook_policy.clone(),
    )
    .context("cannot start the webhook delivery worker")?;
    tracing::info!("webhook delivery worker running");
    Ok(tokio::spawn(async move {
        worker
            .run(async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            })
            .await;
    }))
}

type Task = tokio::task::JoinHandle<Result<(), billing_kafka::KafkaError>>;

/// The consumer of the usage topic, until `stop`.
fn spawn_consumer(
    brokers: &str,
    args: &ServeArgs,
    app: &Application,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Task {
    let mut settings = billing_kafka::ConsumerSettings::new(brokers, &args.kafka.usage_topic);
    settings.dead_letter_topic = Some(args.kafka.dead_letter_topic.clone());
    settings.batch_max = args.kafka.kafka_batch_max.max(1);
    settings.lanes = args.kafka.kafka_fold_lanes.max(1);
    settings.linger = std::time::Duration::from_millis(args.kafka.kafka_linger_ms);
    settings.group = match args.kafka.shard {
        Some(s) => s.own(&args.kafka.kafka_group),
        None => args.kafka.kafka_group.clone(),
    };
    settings.session_timeout_ms = args.kafka.kafka_session_timeout_ms;
    tracing::info!(brokers = %brokers, topic = %args.kafka.usage_topic, "consuming usage events from Kafka");
    let clock = app.state.clock.clone();
    let store = app.state.store.clone();
    tokio::spawn(async move {
        let result = billing_kafka::run(store, settings, move || clock(), stop).await;
        if let Err(e) = &result {
            tracing::error!(error = %e, "the Kafka consumer stopped");
        }
        result
    })
}

/// The outbox relay to the output topics, until `stop`.
fn spawn_relay(brokers: &str, app: &Application, stop: tokio::sync::watch::Receiver<bool>) -> Task {
    let (store, clock, brokers) = (
        app.state.store.clone(),
        app.state.clock.clone(),
        brokers.to_string(),
    );
    tokio::spawn(async move {
        let result = billing_kafka::relay(store, &brokers, move || clock(), stop).await;
        if let Err(e) = &result {
            tracing::error!(error = %e, "the outbox relay stopped");
        }
        result
    })
}

/// Ctrl-C, or SIGTERM from an orchestrator: stop taking requests, finish the batch.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install the SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
}

pub async fn migrate(args: MigrateArgs) -> anyhow::Result<()> {
    let settings = Settings::resolve(&args.serve)?;
    std::fs::create_dir_all(&settings.data_dir)?;
    let store = Store::open(settings.database_url.expose())
        .await
        .context("cannot open the database")?;
    store.close().await;
    eprintln!("gpubill: migrations applied");
    Ok(())
}

#[derive(Args, Debug)]
pub struct CompactArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// `gpubill compact`: drops the identities of closed periods older than the dedupe horizon
/// (see `Store::compact`); safe while engines run.
pub async fn compact(args: CompactArgs) -> anyhow::Result<()> {
    let settings = Settings::resolve(&args.serve)?;
    std::fs::create_dir_all(&settings.data_dir)?;
    let store = Store::open(settings.database_url.expose())
        .await
        .context("cannot open the database")?
        .with_dedupe_horizon(settings.dedupe_horizon_s);
    let dropped = store.log().compact(system_clock()()).await?;
    store.close().await;
    eprintln!(
        "gpubill: dropped {dropped} event identities older than {} days in closed periods",
        settings.dedupe_horizon_s / 86_400
    );
    Ok(())
}
