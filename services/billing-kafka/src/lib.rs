//! # billing-kafka: usage topics into the store, exactly once in effect
//!
//! The consumer never commits offsets to Kafka as the truth: the next offset of each
//! partition is stored in the database in the same transaction as the batch's effects
//! ([`billing_store::Store::fold_partition`], compare-and-set). On assignment it continues from
//! the stored offset; a consumer that lost a partition cannot write stale effects (its
//! compare-and-set fails). Kafka's committed offsets are written afterwards, for information.

use billing_store::{Position, Store, StoreError};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

mod error;
pub use error::KafkaError;
mod record;
use record::usage_record;
mod relay;
pub use relay::relay;
mod replay;
pub use replay::{ReplayReport, ReplaySettings, replay};
mod sink;
pub use sink::UsageSink;
mod topics;
pub use topics::{Ensured, TOPICS_TIMEOUT, TopicError, TopicPlan, ensure_topics};

#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    pub brokers: String,
    pub group: String,
    pub topic: String,
    /// Most records folded in one transaction.
    pub batch_max: usize,
    /// Longest a record waits for its batch to fill.
    pub linger: Duration,
    pub session_timeout_ms: u32,
    /// Where rejected records are relayed (through the outbox), with their reason in headers.
    pub dead_letter_topic: Option<String>,
    /// Transactions a batch is folded in at the same time, each with its own partitions
    /// (a partition's records always go to one of them, in order). More than one keeps both
    /// the engine's and PostgreSQL's cores busy: folds of disjoint partitions take no lock
    /// of each other's (see `Store::begin_fold`).
    pub lanes: usize,
    /// Further librdkafka settings, applied last (e.g. `reconnect.backoff.max.ms`).
    pub client_overrides: Vec<(String, String)>,
}

impl ConsumerSettings {
    pub fn new(brokers: &str, topic: &str) -> Self {
        ConsumerSettings {
            brokers: brokers.to_string(),
            group: "gpubill".into(),
            topic: topic.to_string(),
            batch_max: 1000,
            linger: Duration::from_millis(50),
            session_timeout_ms: 6000,
            dead_letter_topic: Some("gpu.usage.dlq.v1".into()),
            lanes: 2,
            client_overrides: Vec::new(),
        }
    }

    fn client(&self) -> Result<StreamConsumer, KafkaError> {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &self.brokers)
            .set("group.id", &self.group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", "read_uncommitted")
            .set("session.timeout.ms", self.session_timeout_ms.to_string())
            .set("heartbeat.interval.ms", "500")
            // A fetch answers after at most this long even when little arrived: the bound on
            // how long a record can sit at the broker before the engine sees it (decision
            // latency). librdkafka's default is 500 ms.
            .set("fetch.wait.max.ms", "20");
        for (k, v) in &self.client_overrides {
            config.set(k, v);
        }
        Ok(config.create()?)
    }
}

/// Consumes `settings.topic` into `store` until `stop` turns true.
pub async fn run(
    store: Arc<Store>,
    settings: ConsumerSettings,
    clock: impl Fn() -> i64,
    mut stop: watch::Receiver<bool>,
) -> Result<(), KafkaError> {
    let consumer = settings.client()?;
    consumer.subscribe(&[&settings.topic])?;
    let _monitor = AbortOnDrop(tokio::spawn(lag_monitor(
        store.clone(),
        settings.clone(),
        stop.clone(),
    )));
    // Next offset to fold per partition, as known to be stored; None until first seen.
    let mut next: HashMap<i32, i64> = HashMap::new();
    // Partition p's records are collected and folded by lane p % lanes, each lane with one
    // batch in flight: the next one is collected while the previous one is written, and the
    // lanes write at the same time (their partitions, hence accounts, are disjoint).
    let mut lanes: Vec<Lane> = (0..settings.lanes.max(1))
        .map(|_| Lane::default())
        .collect();
    loop {
        // A batch in flight is settled as soon as it is done (see below): wake up for it.
        let wait = lanes
            .iter()
            .filter_map(|l| l.oldest)
            .map(|t| settings.linger.saturating_sub(t.elapsed()))
            .chain(
                lanes
                    .iter()
                    .filter(|l| l.inflight.is_some())
                    .map(|_| SETTLE_POLL),
            )
            .min();
        tokio::select! {
            _ = stop.changed() => {
                if *stop.borrow() { break; }
            }
            msg = consumer.recv() => {
                let msg = match msg {
                    Ok(m) => m,
                    Err(e) => {
                        // Broker unreachable, a rebalance, a transient fetch error: librdkafka
                        // retries on its own; nothing is lost, the store holds the position.
                        tracing::warn!(error = %e, "kafka consume error; retrying");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                };
                place(&msg, &store, &settings.topic, &consumer, &mut next, &mut lanes).await?;
            }
            _ = tokio::time::sleep(wait.unwrap_or(Duration::from_millis(200))), if wait.is_some() => {}
        }
        for lane in &mut lanes {
            // Found by the simulation (issue 14): a batch was settled only when its lane's next
            // batch was due, so a failed batch of an idle partition waited for new records to
            // be read again, and an engine whose fold died went on as if alive.
            if lane.inflight.as_ref().is_some_and(|h| h.is_finished()) {
                let done = lane.inflight.take().expect("checked");
                settle(done, &consumer, &store, &settings.topic, &mut next, lane).await?;
            }
            let due = lane.oldest.is_some_and(|t| t.elapsed() >= settings.linger);
            if lane.pending_count < settings.batch_max && !(due && lane.pending_count > 0) {
                continue;
            }
            if let Some(previous) = lane.inflight.take() {
                settle(
                    previous,
                    &consumer,
                    &store,
                    &settings.topic,
                    &mut next,
                    lane,
                )
                .await?;
                if lane.pending_count == 0 {
                    lane.oldest = None;
                    continue;
                }
            }
            let batch: Vec<OwnedPart> = lane
                .pending
                .drain()
                .map(|(p, records)| {
                    let expected = next[&p];
                    // Optimistically past this batch: a failed batch resets it (`settle`).
                    next.insert(p, records[records.len() - 1].0 + 1);
                    (p, expected, records)
                })
                .collect();
            lane.pending_count = 0;
            lane.oldest = None;
            lane.inflight = Some(spawn_fold(&store, &settings, batch, clock()));
        }
    }
    for lane in &mut lanes {
        if let Some(previous) = lane.inflight.take() {
            settle(
                previous,
                &consumer,
                &store,
                &settings.topic,
                &mut next,
                lane,
            )
            .await?;
        }
    }
    Ok(())
}

/// Puts a consumed record into its partition's lane, unless the store is past it. The first
/// record of a partition moves the consumer to the stored offset when that differs (ahead or
/// behind): the store, not Kafka's committed offset, says where to continue.
async fn place(
    msg: &rdkafka::message::BorrowedMessage<'_>,
    store: &Store,
    topic: &str,
    consumer: &StreamConsumer,
    next: &mut HashMap<i32, i64>,
    lanes: &mut [Lane],
) -> Result<(), KafkaError> {
    let p = msg.partition();
    let offset = msg.offset();
    if let Entry::Vacant(slot) = next.entry(p) {
        let stored = store.log().stored_offset(topic, p as i64).await?;
        match stored {
            Some(s) if s != offset => {
                // Continue exactly where the store says, ahead or behind.
                let mut tpl = TopicPartitionList::new();
                tpl.add_partition_offset(topic, p, Offset::Offset(s))?;
                consumer.seek_partitions(tpl, Duration::from_secs(5))?;
                slot.insert(s);
                return Ok(());
            }
            Some(s) => {
                slot.insert(s);
            }
            None => {
                slot.insert(offset);
            }
        }
    }
    if offset < next[&p] {
        return Ok(());
    }
    let n = lanes.len();
    let lane = &mut lanes[p.rem_euclid(n as i32) as usize];
    lane.pending
        .entry(p)
        .or_default()
        .push((offset, usage_record(msg)));
    lane.pending_count += 1;
    lane.oldest.get_or_insert_with(Instant::now);
    Ok(())
}

/// A lane of the engine: the records collected for its partitions and its batch in flight.
#[derive(Default)]
struct Lane {
    pending: HashMap<i32, Vec<(i64, Vec<u8>)>>,
    pending_count: usize,
    oldest: Option<Instant>,
    inflight: Option<tokio::task::JoinHandle<Folded>>,
}

/// Folds one lane's parts in one transaction, on a task of its own.
fn spawn_fold(
    store: &Arc<Store>,
    settings: &ConsumerSettings,
    batch: Vec<OwnedPart>,
    now: i64,
) -> tokio::task::JoinHandle<Folded> {
    let (store, topic, dlq) = (
        store.clone(),
        settings.topic.clone(),
        settings.dead_letter_topic.clone(),
    );
    tokio::spawn(async move {
        let refs: Vec<Vec<(i64, &[u8])>> = batch
            .iter()
            .map(|(_, _, records)| records.iter().map(|(o, r)| (*o, r.as_slice())).collect())
            .collect();
        let parts: Vec<billing_store::Part<'_>> = batch
            .iter()
            .zip(&refs)
            .map(|((p, expected, _), r)| {
                let at = Position {
                    consumer: &topic,
                    partition: *p as i64,
                    expected_next: *expected,
                    dead_letter_topic: dlq.as_deref(),
                };
                (at, r.as_slice())
            })
            .collect();
        // The lane's partitions in one transaction: one commit per lane and batch.
        let result = store.log().fold_partitions(&parts, now).await.map(|_| ());
        let ends = batch
            .iter()
            .map(|(p, _, records)| (*p, records[records.len() - 1].0 + 1))
            .collect();
        (ends, result)
    })
}

/// How long a lane waits before reading again partitions whose batch met a tree moving in.
const MOVE_WAIT: Duration = Duration::from_millis(200);

/// How often the loop looks at a batch in flight when nothing else wakes it.
const SETTLE_POLL: Duration = Duration::from_millis(10);

/// A partition's share of a batch, owned: partition, the stored offset it continues from,
/// records (offset, payload).
type OwnedPart = (i32, i64, Vec<(i64, Vec<u8>)>);

/// A finished batch: `(partition, next offset)` per part and how the fold went.
type Folded = (Vec<(i32, i64)>, Result<(), StoreError>);

/// Waits for a lane of the batch in flight and takes its result: informational Kafka commits when it was written; when
/// another consumer moved one of its partitions meanwhile (a rebalance), nothing was written:
/// those partitions resume from the store (their collected records are dropped and read
/// again from the stored offset).
async fn settle(
    batch: tokio::task::JoinHandle<Folded>,
    consumer: &StreamConsumer,
    store: &Store,
    topic: &str,
    next: &mut HashMap<i32, i64>,
    lane: &mut Lane,
) -> Result<(), KafkaError> {
    let (ends, result) = batch.await.map_err(|e| KafkaError::Task(e.to_string()))?;
    match result {
        Ok(()) => {
            let mut tpl = TopicPartitionList::new();
            for (p, end) in &ends {
                tpl.add_partition_offset(topic, *p, Offset::Offset(*end))?;
            }
            // Informational only: the store holds the truth.
            let _ = consumer.commit(&tpl, CommitMode::Async);
            Ok(())
        }
        Err(e) if e.is_retryable() || matches!(e, StoreError::Fenced { .. }) => {
            tracing::warn!(error = %e, "batch not written; resuming from the stored offsets");
            if matches!(e, StoreError::TreeMoving { .. }) {
                // A move takes seconds: read the partitions again a little later, not at once.
                tokio::time::sleep(MOVE_WAIT).await;
            }
            for (p, _) in &ends {
                next.remove(p);
                lane.pending_count -= lane.pending.remove(p).map_or(0, |r| r.len());
                // Read the partition again from the stored offset now, not when its next
                // record happens to arrive (a partition that lost its assignment refuses the
                // seek, which is fine: its new owner reads it).
                if let Ok(stored) = store.log().stored_offset(topic, *p as i64).await {
                    let mut tpl = TopicPartitionList::new();
                    let at = stored.map_or(Offset::Beginning, Offset::Offset);
                    if tpl.add_partition_offset(topic, *p, at).is_ok() {
                        let _ = consumer.seek_partitions(tpl, Duration::from_secs(5));
                    }
                }
            }
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Stops a helper task when the function that spawned it returns, however it returns.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `gpubill_consumer_lag_records{partition}`: each partition's high watermark minus the
/// position stored in the database, once a second, on its own task (the broker round trip
/// never delays folding). On tansu 0.6.0 the high watermark is the base offset of the last
/// record batch, so the gauge reads low there while a batch is being consumed.
async fn lag_monitor(
    store: Arc<Store>,
    settings: ConsumerSettings,
    mut stop: watch::Receiver<bool>,
) {
    use rdkafka::consumer::BaseConsumer;
    let client: Arc<BaseConsumer> = match ClientConfig::new()
        .set("bootstrap.servers", &settings.brokers)
        .create()
    {
        Ok(c) => Arc::new(c),
        Err(e) => {
            tracing::warn!(error = %e, "no consumer lag gauge");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = stop.changed() => if *stop.borrow() { return },
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        let (c, topic) = (client.clone(), settings.topic.clone());
        let highs = tokio::task::spawn_blocking(move || {
            let metadata = c
                .fetch_metadata(Some(&topic), Duration::from_secs(2))
                .ok()?;
            let partitions: Vec<i32> = metadata
                .topics()
                .iter()
                .flat_map(|t| t.partitions().iter().map(|p| p.id()))
                .collect();
            Some(
                partitions
                    .into_iter()
                    .filter_map(|p| {
                        Some((
                            p,
                            c.fetch_watermarks(&topic, p, Duration::from_secs(2))
                                .ok()?
                                .1,
                        ))
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
        for (p, high) in highs {
            if let Ok(Some(stored)) = store.log().stored_offset(&settings.topic, p as i64).await {
                metrics::gauge!("gpubill_consumer_lag_records", "partition" => p.to_string())
                    .set((high - stored).max(0) as f64);
            }
        }
    }
}
