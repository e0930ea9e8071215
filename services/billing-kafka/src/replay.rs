//! `gpubill replay`: rebuild every projection from the beginning of the topics into an empty
//! database.
//!
//! The commands topic is read to its end first. It holds the admin's commands (price books,
//! accounts, terms, wallets, period closes; see `billing_store::Command`) and, since issue 30,
//! a record of every fold the engine committed (`usage.folded`: which offsets of which
//! partitions, the clock it decided them with, the fold stamp and dead-letter numbers it
//! drew), each written in the transaction it records. The replay then goes through that topic
//! in order: a command is applied, a recorded fold folds the same records again with the same
//! clock and numbers, in one transaction as the original did. Every decision that depends on
//! time (`too_late`, `too_early`, the dedupe horizon, late usage, ingest times) is taken from
//! that recorded clock, never from a record's Kafka timestamp (a node agent's clock), so the
//! replay decides as the live engine did and writes byte-identical rows.
//!
//! Usage no fold recorded (a log written by an engine before issue 30) is folded where a close
//! needs it (up to the close's recorded positions, with the close's time) or before the first
//! recorded fold of its partition (with that fold's time); usage after the last command is
//! folded at the end with the replay's own clock, as an engine starting now would fold it.
//! Commands and folds relayed twice (same id) are applied once.

use crate::error::KafkaError;
use billing_store::{Command, FoldedPart, Position, Recorded, Store, StoreError};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, HashSet, VecDeque};
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
    /// Recorded folds (`usage.folded` records) folded again; not counted in `commands`.
    pub folds: usize,
}

/// Replays the topics into `store`, which must be empty.
pub async fn replay(
    store: Arc<Store>,
    settings: ReplaySettings,
    clock: impl Fn() -> i64,
) -> Result<ReplayReport, KafkaError> {
    if !store.log().is_empty().await? {
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
    let commands = read_commands(&consumer, &settings, &mut report).await?;
    report.commands = commands
        .iter()
        .filter(|(c, _)| !matches!(c, Command::Folded { .. }))
        .count();

    // 2. Usage partitions: where each starts (the next offset to fold) and ends.
    let (mut next, ends) = watermarks(&consumer, &settings.usage_topic)?;
    report.partitions = ends.len();

    // 3. The commands in their order, each recorded fold folding its records again with
    //    its clock and numbers; usage no fold recorded is folded where a close needs it, and
    //    the rest at the end.
    let mut usage = Usage {
        consumer: &consumer,
        settings: &settings,
        buffers: BTreeMap::new(),
        read_to: BTreeMap::new(),
        ends: ends.clone(),
    };
    // The parts of a tree moved in (issue 29), applied together once the last arrives.
    let mut moving_in: Vec<Command> = Vec::new();
    for item in commands.into_iter().map(Some).chain([None]) {
        let (mut command, actor) = match item {
            Some((c, a)) => (Some(c), a),
            None => (None, None),
        };
        if let Some(part @ Command::TreeMovedIn { parts, .. }) = &command
            && *parts > 1
        {
            moving_in.push(part.clone());
            match billing_store::shard::join_moved_in(&moving_in) {
                Ok(None) => continue,
                Ok(Some(joined)) => {
                    moving_in.clear();
                    command = Some(joined);
                }
                Err(detail) => {
                    return Err(KafkaError::BadCommand {
                        topic: settings.commands_topic.clone(),
                        offset: -1,
                        detail,
                    });
                }
            }
        }
        match &command {
            Some(Command::Folded {
                consumer: c,
                parts,
                now_ms,
                stamp,
                dead_letters,
                dead_letter_topic,
            }) => {
                if *c != settings.usage_topic {
                    continue;
                }
                let recorded = Recorded {
                    now_ms: *now_ms,
                    stamp: *stamp,
                    dead_letters: dead_letters.clone(),
                };
                let folded = (parts.as_slice(), dead_letter_topic.as_deref());
                report.records +=
                    fold_recorded(&store, &mut usage, &mut next, folded, &recorded).await?;
                report.folds += 1;
                continue;
            }
            Some(Command::ClosePeriod {
                positions, at_ms, ..
            }) => {
                report.records +=
                    fold_before_close(&store, &mut usage, &mut next, positions, *at_ms).await?;
            }
            Some(_) => {}
            None => {
                report.records += fold_the_rest(&store, &usage, &next, clock()).await?;
            }
        }
        if let Some(c) = command {
            let actor = actor.unwrap_or_else(|| "admin".to_string());
            billing_store::actor::as_actor(actor, store.log().apply_command(&c)).await?;
        }
    }
    // The outputs of the original run are on the topics already: nothing to relay again.
    store.log().outbox_mark_all_published(clock()).await?;
    Ok(report)
}

/// Usage before a close that no recorded fold covers (a log written before folds were
/// recorded), folded with the close's time (`at_ms`); answers the records folded.
async fn fold_before_close(
    store: &Store,
    usage: &mut Usage<'_>,
    next: &mut BTreeMap<i32, i64>,
    positions: &[billing_store::PartitionPosition],
    at_ms: i64,
) -> Result<u64, KafkaError> {
    let settings = usage.settings;
    let mut folded = 0;
    for at in positions
        .iter()
        .filter(|at| at.consumer == settings.usage_topic)
    {
        let p = at.partition as i32;
        let from = next.get(&p).copied().unwrap_or(0);
        if from < at.next_offset {
            let records = usage.take(p, from, at.next_offset).await?;
            folded += fold_unrecorded(store, settings, p, from, &records, at_ms).await?;
            next.insert(p, at.next_offset);
        }
    }
    Ok(folded)
}

/// Usage after the last recorded fold, folded at `now_ms` as an engine starting now would
/// fold it; answers the records folded.
async fn fold_the_rest(
    store: &Store,
    usage: &Usage<'_>,
    next: &BTreeMap<i32, i64>,
    now_ms: i64,
) -> Result<u64, KafkaError> {
    let settings = usage.settings;
    let mut folded = 0;
    for (&p, &high) in &usage.ends {
        let from = next.get(&p).copied().unwrap_or(0);
        let mut records = Vec::new();
        read_range(
            usage.consumer,
            settings,
            &settings.usage_topic,
            p,
            from,
            End::Settled(high),
            |offset, msg| {
                records.push((offset, crate::record::usage_record(msg)));
                Ok(())
            },
        )
        .await?;
        folded += fold_unrecorded(store, settings, p, from, &records, now_ms).await?;
    }
    Ok(folded)
}

/// Every partition of `topic` with its low and high watermarks.
type Watermarks = (BTreeMap<i32, i64>, BTreeMap<i32, i64>);

fn watermarks(consumer: &StreamConsumer, topic: &str) -> Result<Watermarks, KafkaError> {
    let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    let (mut lows, mut highs) = (BTreeMap::new(), BTreeMap::new());
    for p in metadata
        .topics()
        .iter()
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
    {
        let (low, high) = consumer.fetch_watermarks(topic, p, Duration::from_secs(10))?;
        lows.insert(p, low);
        highs.insert(p, high);
    }
    Ok((lows, highs))
}

/// The commands topic to its end, each command once (`report` counts the duplicates), with
/// who made it (issue 24.7: kept on the rebuilt outbox, so the audit log reads the same).
async fn read_commands(
    consumer: &StreamConsumer,
    settings: &ReplaySettings,
    report: &mut ReplayReport,
) -> Result<Vec<(Command, Option<String>)>, KafkaError> {
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
        consumer,
        settings,
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
    Ok(commands)
}

/// Folds one recorded fold's records again, with its clock and numbers, in one transaction
/// as the original did. Returns how many records.
async fn fold_recorded(
    store: &Store,
    usage: &mut Usage<'_>,
    next: &mut BTreeMap<i32, i64>,
    (parts, dead_letter_topic): (&[FoldedPart], Option<&str>),
    recorded: &Recorded,
) -> Result<u64, KafkaError> {
    let topic = usage.settings.usage_topic.clone();
    let mut owned = Vec::new();
    for part in parts {
        let p = part.partition as i32;
        let at = next.get(&p).copied().unwrap_or(0);
        if at > part.from {
            return Err(KafkaError::Store(StoreError::Corrupt(format!(
                "{topic} partition {p}: a fold recorded from offset {}, but the replay has folded up to {at}",
                part.from
            ))));
        }
        if at < part.from {
            // Folded before folds were recorded (an older engine): with this fold's clock.
            let records = usage.take(p, at, part.from).await?;
            fold_unrecorded(store, usage.settings, p, at, &records, recorded.now_ms).await?;
        }
        owned.push((part, usage.take(p, part.from, part.to).await?));
        next.insert(p, part.to);
    }
    let refs: Vec<Vec<(i64, &[u8])>> = owned
        .iter()
        .map(|(_, records)| records.iter().map(|(o, r)| (*o, r.as_slice())).collect())
        .collect();
    let folded: Vec<billing_store::Part<'_>> = owned
        .iter()
        .zip(&refs)
        .map(|((part, _), r)| {
            let at = Position {
                consumer: &topic,
                partition: part.partition,
                expected_next: part.from,
                // The outbox rows the original wrote, written again (and marked published).
                dead_letter_topic,
            };
            (at, r.as_slice())
        })
        .collect();
    store.log().fold_recorded(&folded, recorded).await?;
    Ok(refs.iter().map(|r| r.len() as u64).sum())
}

/// Folds records of partition `p` from offset `from` that no fold recorded, in batches of up
/// to 1,000, all with the clock `now_ms` (a fact of the log: the time of the command that
/// needs them, or the replay's own for the usage after the last command).
async fn fold_unrecorded(
    store: &Store,
    settings: &ReplaySettings,
    p: i32,
    from: i64,
    records: &[(i64, Vec<u8>)],
    now_ms: i64,
) -> Result<u64, KafkaError> {
    // A range that ended in a gap (compaction, transaction markers) left the stored position
    // at its last record: continue from what is stored.
    let mut expected_next = store
        .log()
        .stored_offset(&settings.usage_topic, p as i64)
        .await?
        .unwrap_or(from);
    for chunk in records.chunks(1000) {
        let refs: Vec<(i64, &[u8])> = chunk.iter().map(|(o, r)| (*o, r.as_slice())).collect();
        let at = Position {
            consumer: &settings.usage_topic,
            partition: p as i64,
            expected_next,
            dead_letter_topic: None,
        };
        store.log().fold_partition(at, &refs, now_ms).await?;
        expected_next = chunk[chunk.len() - 1].0 + 1;
    }
    Ok(records.len() as u64)
}

/// The usage topic as the replay reads it: each partition read ahead in ranges of up to
/// [`READ_AHEAD`] records, so that a recorded fold of a few records costs no fetch of its own.
struct Usage<'c> {
    consumer: &'c StreamConsumer,
    settings: &'c ReplaySettings,
    buffers: BTreeMap<i32, VecDeque<(i64, Vec<u8>)>>,
    /// Per partition: every record before this offset was read (into the buffer or past it).
    read_to: BTreeMap<i32, i64>,
    /// The high watermarks at the start.
    ends: BTreeMap<i32, i64>,
}

/// How far ahead of a recorded fold a partition is read.
const READ_AHEAD: i64 = 10_000;

impl Usage<'_> {
    /// The records of partition `p` in offsets `[from, to)`, in order.
    async fn take(
        &mut self,
        p: i32,
        from: i64,
        to: i64,
    ) -> Result<Vec<(i64, Vec<u8>)>, KafkaError> {
        let buffer = self.buffers.entry(p).or_default();
        while buffer.front().is_some_and(|(o, _)| *o < from) {
            buffer.pop_front();
        }
        let read = self.read_to.get(&p).copied().unwrap_or(from).max(from);
        if read < to {
            let high = self.ends.get(&p).copied().unwrap_or(to);
            let until = to.max(high.min(read + READ_AHEAD));
            read_range(
                self.consumer,
                self.settings,
                &self.settings.usage_topic,
                p,
                read,
                End::At(until),
                |offset, msg| {
                    buffer.push_back((offset, crate::record::usage_record(msg)));
                    Ok(())
                },
            )
            .await?;
            self.read_to.insert(p, until);
        }
        let mut out = Vec::new();
        while buffer.front().is_some_and(|(o, _)| *o < to) {
            out.extend(buffer.pop_front());
        }
        Ok(out)
    }
}

/// Where a range of a partition ends.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Exactly before this offset (a close's position, a recorded fold's end).
    At(i64),
    /// The end of the partition: past this reported high watermark, once nothing more
    /// arrives for `settle`.
    Settled(i64),
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
