//! `gpubill replay`: rebuild every projection from the beginning of the topics into an empty
//! database.
//!
//! The commands topic (price books, accounts, period closes; see `billing_store::Command`) is
//! read to its end first. Usage records are then folded partition by partition in the order
//! the commands need: before a period close, each usage partition is folded exactly up to the
//! position the original close was computed at, so the close sees the same ledger and issues
//! byte-identical invoices (ids, numbers, `issued_at` and bodies). Whatever usage came after
//! the last close is folded at the end (late usage is listed again as pending adjustments).
//! Commands relayed twice (same id) are applied once.

use crate::KafkaError;
use billing_store::{Command, Position, Store};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct ReplaySettings {
    pub brokers: String,
    pub usage_topic: String,
    pub commands_topic: String,
    /// Longest wait for the next record of a range that the watermarks say exists.
    pub read_timeout: Duration,
    /// At the end of a partition: how long no further record must arrive before the replay
    /// takes it as the end (a broker's high watermark is not trusted to be exact: tansu
    /// 0.6.0 reports the base offset of the last record batch).
    pub settle: Duration,
}

impl ReplaySettings {
    pub fn new(brokers: &str, usage_topic: &str, commands_topic: &str) -> Self {
        ReplaySettings {
            brokers: brokers.into(),
            usage_topic: usage_topic.into(),
            commands_topic: commands_topic.into(),
            read_timeout: Duration::from_secs(30),
            settle: Duration::from_secs(1),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayReport {
    pub commands: usize,
    pub duplicate_commands: usize,
    pub records: u64,
    pub partitions: usize,
}

/// Replays the topics into `store`, which must be empty.
pub async fn replay(
    store: Arc<Store>,
    settings: ReplaySettings,
    clock: impl Fn() -> i64,
) -> Result<ReplayReport, KafkaError> {
    if !store.is_empty().await? {
        return Err(KafkaError::NotEmpty);
    }
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &settings.brokers)
        .set("group.id", "gpubill-replay")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("isolation.level", "read_uncommitted")
        .create()?;
    let mut report = ReplayReport::default();

    // 1. The commands, in order, each once. Their order is the order of one partition.
    let metadata =
        consumer.fetch_metadata(Some(&settings.commands_topic), Duration::from_secs(10))?;
    let n = metadata
        .topics()
        .first()
        .map_or(0, |t| t.partitions().len());
    if n != 1 {
        return Err(KafkaError::BadCommand {
            topic: settings.commands_topic.clone(),
            offset: -1,
            detail: format!(
                "the commands topic must exist with exactly one partition (it has {n}): its order is the commands' order"
            ),
        });
    }
    let (_, high) =
        consumer.fetch_watermarks(&settings.commands_topic, 0, Duration::from_secs(10))?;
    let mut commands = Vec::new();
    let mut seen = HashSet::new();
    read_range(
        &consumer,
        &settings,
        &settings.commands_topic,
        0,
        0,
        End::Settled(high),
        |offset, msg| {
            let payload = msg.payload().unwrap_or_default();
            let command: Command =
                serde_json::from_slice(payload).map_err(|e| KafkaError::BadCommand {
                    topic: settings.commands_topic.clone(),
                    offset,
                    detail: e.to_string(),
                })?;
            if seen.insert(command.id()) {
                // Who made it (issue 24.7): kept on the rebuilt outbox, so the audit log reads
                // the same after a replay.
                let actor = msg.headers().and_then(|h| {
                    use rdkafka::message::Headers;
                    h.iter()
                        .find(|h| h.key == "gpubill-actor")
                        .and_then(|h| h.value)
                        .map(|v| String::from_utf8_lossy(v).into_owned())
                });
                commands.push((command, actor));
            } else {
                report.duplicate_commands += 1;
            }
            Ok(())
        },
    )
    .await?;
    report.commands = commands.len();

    // 2. Usage partitions and their ends.
    let metadata = consumer.fetch_metadata(Some(&settings.usage_topic), Duration::from_secs(10))?;
    let partitions: Vec<i32> = metadata
        .topics()
        .iter()
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .collect();
    report.partitions = partitions.len();
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    let mut ends: BTreeMap<i32, i64> = BTreeMap::new();
    for &p in &partitions {
        let (low, high) =
            consumer.fetch_watermarks(&settings.usage_topic, p, Duration::from_secs(10))?;
        next.insert(p, low);
        ends.insert(p, high);
    }

    // 3. Commands interleaved with the usage they were computed at; then the rest.
    for item in commands.into_iter().map(Some).chain([None]) {
        let (command, actor) = match item {
            Some((c, a)) => (Some(c), a),
            None => (None, None),
        };
        let targets: BTreeMap<i32, End> = match &command {
            Some(Command::ClosePeriod { positions, .. }) => positions
                .iter()
                .filter(|at| at.consumer == settings.usage_topic)
                .map(|at| (at.partition as i32, End::At(at.next_offset)))
                .collect(),
            Some(_) => BTreeMap::new(),
            None => ends.iter().map(|(p, h)| (*p, End::Settled(*h))).collect(),
        };
        for (p, until) in targets {
            let from = next.get(&p).copied().unwrap_or(0);
            let (records, reached) =
                fold_range(&store, &consumer, &settings, p, from, until, &clock).await?;
            report.records += records;
            next.insert(p, reached.max(from));
        }
        if let Some(c) = command {
            let actor = actor.unwrap_or_else(|| "admin".to_string());
            billing_store::actor::as_actor(actor, store.apply_command(&c)).await?;
        }
    }
    // The outputs of the original run are on the topics already: nothing to relay again.
    store.outbox_mark_all_published(clock()).await?;
    Ok(report)
}

/// Where a range of a partition ends.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Exactly before this offset (a close's position).
    At(i64),
    /// The end of the partition: past this reported high watermark, once nothing more
    /// arrives for `settle`.
    Settled(i64),
}

/// Folds usage records `[from, until)` of partition `p` in batches of up to 1,000, moving the
/// stored position with each. Returns how many and the offset reached.
async fn fold_range(
    store: &Store,
    consumer: &StreamConsumer,
    settings: &ReplaySettings,
    p: i32,
    from: i64,
    until: End,
    clock: &impl Fn() -> i64,
) -> Result<(u64, i64), KafkaError> {
    let mut pending = Vec::new();
    let reached = read_range(
        consumer,
        settings,
        &settings.usage_topic,
        p,
        from,
        until,
        |offset, msg| {
            use rdkafka::Message;
            let at = msg.timestamp().to_millis();
            pending.push((offset, crate::usage_record(msg), at));
            Ok(())
        },
    )
    .await?;
    // A range that ended in a gap (compaction, transaction markers) left the stored position
    // at its last record: continue from what is stored.
    let mut expected_next = store
        .stored_offset(&settings.usage_topic, p as i64)
        .await?
        .unwrap_or(from);
    for chunk in pending.chunks(1000) {
        let refs: Vec<(i64, &[u8])> = chunk.iter().map(|(o, r, _)| (*o, r.as_slice())).collect();
        // The batch's clock is the records' own time (their Kafka timestamps), not the time of
        // the replay: an event refused as `too_early` when it arrived is refused again.
        let now = chunk
            .iter()
            .filter_map(|(_, _, at)| *at)
            .max()
            .unwrap_or_else(clock);
        let at = Position {
            consumer: &settings.usage_topic,
            partition: p as i64,
            expected_next,
            dead_letter_topic: None,
        };
        store.fold_partition(at, &refs, now).await?;
        expected_next = chunk[chunk.len() - 1].0 + 1;
    }
    Ok((pending.len() as u64, reached))
}

/// Reads offsets `[from, until)` of one partition, calling `each` in offset order; returns
/// the offset after the last record read (or `from`).
async fn read_range(
    consumer: &StreamConsumer,
    settings: &ReplaySettings,
    topic: &str,
    p: i32,
    from: i64,
    end: End,
    mut each: impl FnMut(i64, &rdkafka::message::BorrowedMessage<'_>) -> Result<(), KafkaError>,
) -> Result<i64, KafkaError> {
    let (until, settled) = match end {
        End::At(o) => (o, false),
        End::Settled(high) => (high, true),
    };
    if until <= from && !settled {
        return Ok(from);
    }
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, p, Offset::Offset(from))?;
    consumer.assign(&tpl)?;
    let mut at = from;
    loop {
        let past_end = at >= until;
        if past_end && !settled {
            return Ok(at);
        }
        let short = |why: String| KafkaError::Short {
            topic: topic.to_string(),
            partition: p,
            at,
            until,
            why,
        };
        let wait = if past_end {
            settings.settle
        } else {
            settings.read_timeout
        };
        let msg = match tokio::time::timeout(wait, consumer.recv()).await {
            Err(_) if past_end => return Ok(at),
            Err(_) => return Err(short(format!("nothing for {wait:?}"))),
            Ok(Err(e)) => return Err(short(e.to_string())),
            Ok(Ok(m)) => m,
        };
        // Leftovers of an earlier assignment, or a record read already.
        if msg.topic() != topic || msg.partition() != p || msg.offset() < at {
            continue;
        }
        if msg.offset() >= until && !settled {
            return Ok(at);
        }
        each(msg.offset(), &msg)?;
        at = msg.offset() + 1;
    }
}
