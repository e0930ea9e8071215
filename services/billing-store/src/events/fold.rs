//! Folding a batch of log records into the store, in one transaction.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::LogHandle;
use crate::conn::sql::{Val, insert_rows};
use crate::conn::store::{EMBEDDED_CONSUMER, Store};
pub use crate::events::batch::Outcome;
use crate::events::records::{Part, Position, Records};
use crate::events::sort::{dedupe, sort_records};
use billing_core::event::{AnyEvent, Rejection, decode_any};

impl LogHandle<'_> {
    /// Folds every log record the engine has not folded yet (after a crash between append and
    /// fold in another writer, or records appended by other means). Returns how many.
    pub async fn catch_up(&self, now_ms: i64) -> Result<u64> {
        let _w = self.writer.lock().await;
        self.catch_up_locked(now_ms).await
    }

    /// Folds records read from `at`'s partition (offsets ascending, gaps allowed) and moves
    /// the stored position past the last one, in one transaction. `Fenced` when the stored
    /// position is not `at.expected_next`: another consumer owns the partition now.
    pub async fn fold_partition(
        &self,
        at: Position<'_>,
        records: &[(i64, &[u8])],
        now_ms: i64,
    ) -> Result<Vec<Outcome>> {
        let _w = self.fold_guard().await;
        let mut tx = self.begin_fold(&[(at.consumer, at.partition)]).await?;
        let result = fold_parts(&mut tx, self, &[(at, records)], Clock::Now(now_ms))
            .await
            .map(|mut out| out.pop().unwrap_or_default());
        finish(tx, result).await
    }

    /// [`Store::fold_partition`] for several partitions in one transaction: one commit for
    /// the whole consumer batch. `Fenced` (and nothing written) when any part's stored
    /// position moved.
    pub async fn fold_partitions(
        &self,
        parts: &[Part<'_>],
        now_ms: i64,
    ) -> Result<Vec<Vec<Outcome>>> {
        self.fold_partitions_then(parts, now_ms, async {}).await
    }

    /// [`Store::fold_partitions`] of records a fold recorded (issue 30, `gpubill replay`):
    /// with its clock, its stamp and its dead letters' numbers, so that it writes what the
    /// original fold wrote.
    pub async fn fold_recorded(
        &self,
        parts: &[Part<'_>],
        recorded: &crate::events::commands::Recorded,
    ) -> Result<Vec<Vec<Outcome>>> {
        self.fold_locked(parts, Clock::Recorded(recorded), async {})
            .await
    }

    /// [`Store::fold_partitions`] that awaits `before_commit` with the batch folded and its
    /// transaction (and locks) still open: a fault-injection point for tests of concurrent
    /// engines ("one engine's transaction held open, the others keep folding").
    pub async fn fold_partitions_then(
        &self,
        parts: &[Part<'_>],
        now_ms: i64,
        before_commit: impl std::future::Future<Output = ()>,
    ) -> Result<Vec<Vec<Outcome>>> {
        self.fold_locked(parts, Clock::Now(now_ms), before_commit)
            .await
    }

    /// Folds `parts` in one transaction holding their partitions' locks, awaiting
    /// `before_commit` with the batch folded and the transaction still open.
    async fn fold_locked(
        &self,
        parts: &[Part<'_>],
        clock: Clock<'_>,
        before_commit: impl std::future::Future<Output = ()>,
    ) -> Result<Vec<Vec<Outcome>>> {
        let _w = self.fold_guard().await;
        let locks: Vec<(&str, i64)> = parts
            .iter()
            .map(|(at, _)| (at.consumer, at.partition))
            .collect();
        let mut tx = self.begin_fold(&locks).await?;
        let result = fold_parts(&mut tx, self, parts, clock).await;
        if result.is_ok() {
            before_commit.await;
        }
        finish(tx, result).await
    }

    /// What a fold holds in this process besides its transaction's locks: on SQLite the
    /// writer lock (one writer at a time); on PostgreSQL nothing, so that folds of different
    /// partitions in one process (the Kafka engine's lanes) run at the same time, ordered
    /// only by `begin_fold`'s advisory locks, as folds of different processes are.
    async fn fold_guard(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.backend.fold_mutex(&self.writer) {
            Some(writer) => Some(writer.lock().await),
            None => None,
        }
    }

    /// The stored next offset of a consumer's partition, if any.
    pub async fn stored_offset(&self, consumer: &str, partition: i64) -> Result<Option<i64>> {
        let row = crate::conn::db::query(include_str!(
            "../../queries/shared/select_stored_offset.sql"
        ))
        .bind(consumer)
        .bind(partition)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.get("next_offset")))
    }
}

/// Commits when the batch folded, rolls back at once when it did not: not when the pool gets
/// to it, because the caller may retry straight away and SQLite refuses a writer while the
/// failed transaction still holds its snapshot.
async fn finish<T>(tx: crate::conn::db::Tx, result: Result<T>) -> Result<T> {
    match result {
        Ok(v) => {
            tx.commit().await?;
            Ok(v)
        }
        Err(e) => {
            tx.rollback().await?;
            Err(e)
        }
    }
}

/// Decodes, dedupes and folds `batch` (log records in sequence order) and advances the offset
/// past it with compare-and-set. The caller owns the transaction.
pub(crate) async fn fold(
    conn: &mut dyn Conn,
    store: &Store,
    batch: &[(i64, &[u8])],
    now_ms: i64,
) -> Result<Vec<Outcome>> {
    let Some(&(first_seq, _)) = batch.first() else {
        return Ok(Vec::new());
    };
    fold_at(
        conn,
        store,
        Position {
            consumer: EMBEDDED_CONSUMER,
            partition: 0,
            expected_next: first_seq,
            dead_letter_topic: None,
        },
        batch,
        now_ms,
    )
    .await
}

/// [`fold`] for any consumer position: records carry their offsets (which may have gaps).
/// Runs in a `fold_batch` span (exported to OpenTelemetry when configured) that records the
/// batch's position, outcome counts, dead letters by reason and latency.
pub(crate) async fn fold_at(
    conn: &mut dyn Conn,
    store: &Store,
    at: Position<'_>,
    batch: &[(i64, &[u8])],
    now_ms: i64,
) -> Result<Vec<Outcome>> {
    let mut out = fold_parts(conn, store, &[(at, batch)], Clock::Now(now_ms)).await?;
    Ok(out.pop().unwrap_or_default())
}

/// Several partitions' records in one transaction (one span, one commit): each part moves its
/// own stored position with compare-and-set; outcomes per part, in record order.
/// What a fold decides with: the engine's clock now (stamp and dead-letter numbers drawn), or
/// a recorded fold's (issue 30: a replay).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Clock<'r> {
    Now(i64),
    Recorded(&'r crate::events::commands::Recorded),
}

impl Clock<'_> {
    fn now_ms(self) -> i64 {
        match self {
            Clock::Now(t) => t,
            Clock::Recorded(r) => r.now_ms,
        }
    }
}

pub(crate) async fn fold_parts(
    conn: &mut dyn Conn,
    store: &Store,
    parts: &[Part<'_>],
    clock: Clock<'_>,
) -> Result<Vec<Vec<Outcome>>> {
    use tracing::Instrument;
    let partitions: Vec<String> = parts
        .iter()
        .map(|(at, _)| at.partition.to_string())
        .collect();
    let span = tracing::info_span!(
        "fold_batch",
        consumer = parts.first().map(|(at, _)| at.consumer),
        partitions = partitions.join(","),
        first_offset = parts.first().and_then(|(_, b)| b.first()).map(|b| b.0),
        records = parts.iter().map(|(_, b)| b.len()).sum::<usize>(),
        accepted = tracing::field::Empty,
        duplicates = tracing::field::Empty,
        dead_letters = tracing::field::Empty,
        dead_letter_reasons = tracing::field::Empty,
        latency_ms = tracing::field::Empty,
        error = tracing::field::Empty,
    );
    let t0 = std::time::Instant::now();
    let result = fold_inner(conn, store, parts, clock)
        .instrument(span.clone())
        .await;
    span.record("latency_ms", t0.elapsed().as_secs_f64() * 1e3);
    if t0.elapsed() > SLOW_BATCH {
        tracing::warn!(
            records = parts.iter().map(|(_, b)| b.len()).sum::<usize>(),
            latency_ms = t0.elapsed().as_millis() as u64,
            ok = result.is_ok(),
            "slow batch"
        );
    }
    match &result {
        Ok(outcomes) => {
            let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
            let (mut accepted, mut duplicates) = (0, 0);
            for o in outcomes.iter().flatten() {
                match o {
                    Outcome::Accepted => accepted += 1,
                    Outcome::Duplicate => duplicates += 1,
                    Outcome::Rejected { reason, .. } => {
                        *reasons.entry(reason.as_str()).or_default() += 1
                    }
                }
            }
            span.record("accepted", accepted);
            span.record("duplicates", duplicates);
            span.record("dead_letters", reasons.values().sum::<usize>());
            if !reasons.is_empty() {
                let list: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}={n}")).collect();
                span.record("dead_letter_reasons", list.join(","));
            }
        }
        Err(e) => {
            span.record("error", tracing::field::display(e));
        }
    }
    result
}

/// The fold of one batch, in its transaction, as a pipeline of steps in one direction:
/// decode and dedupe (identities written), sort every record into its outcome and rows, the
/// ledger, the side tables, holds captured by usage, then the effects (provisional costs,
/// quota decisions), the fenced offsets and the metrics.
async fn fold_inner(
    conn: &mut dyn Conn,
    store: &Store,
    parts: &[Part<'_>],
    clock: Clock<'_>,
) -> Result<Vec<Vec<Outcome>>> {
    let now_ms = clock.now_ms();
    // Records in part order, each part in offset order: within a partition "the first one
    // stands" is the first in the partition's order.
    let batch: Records<'_> = parts
        .iter()
        .enumerate()
        .flat_map(|(i, (_, b))| b.iter().map(move |(o, r)| (i, *o, *r)))
        .collect();
    let t0 = std::time::Instant::now();
    let decoded = decode_batch(store, &batch, now_ms);
    let (batch, decoded) =
        crate::events::own_trees::keep_own_trees(conn, store, parts, batch, decoded).await?;
    let t_decode = t0.elapsed();
    let known = dedupe(conn, store.backend, &store.identity_path, &batch, &decoded).await?;
    let t_identities = t0.elapsed();
    let closed: Vec<(String, i64, i64)> = crate::conn::db::query(include_str!(
        "../../queries/shared/select_closed_periods.sql"
    ))
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| (r.get("period"), r.get("start_s"), r.get("end_s")))
    .collect();
    let mut sorted = sort_records(parts, &batch, &decoded, known, &closed, now_ms);
    let t_dedupe = t0.elapsed();
    // Every account the batch moves gets a fresh ledger token (`ledger_cache`); the tokens
    // stored before say which kept ledgers are still the committed ones.
    let stamp = crate::ledger::ledger_cache::stamp(conn, store.backend, &sorted.accounts()).await?;
    let kept = (&store.ledger_cache, &stamp);
    let changed =
        crate::events::writes::write_ledger(conn, store.backend, &sorted.usage, kept).await?;
    store.failpoints.hit("fold.after_ledger")?;
    let t_ledger = t0.elapsed();
    let given = match clock {
        Clock::Now(_) => None,
        Clock::Recorded(r) => Some(r),
    };
    let fold_stamp =
        crate::events::writes::stamp(conn, store.backend, given.map(|r| r.stamp)).await?;
    let dead_letters = crate::events::writes::dead_letter_numbers(
        conn,
        store.backend,
        sorted.dead.len(),
        given.map(|r| r.dead_letters.as_slice()),
    )
    .await?;
    let egress_seconds = crate::events::writes::write_side_tables(
        conn,
        &mut sorted,
        (now_ms, fold_stamp),
        &dead_letters,
    )
    .await?;
    store.failpoints.hit("fold.after_side_tables")?;
    // Holds are the home account's: regional usage captures none (section 19 domains).
    let leases = sorted
        .usage
        .values()
        .filter(|(k, _)| !k.account.contains(billing_core::domain::SEPARATOR))
        .map(|(k, _)| (&*k.account, k.lease));
    crate::events::capture::capture_holds(conn, store.backend, leases, now_ms).await?;
    let t_side = t0.elapsed();
    let moved = crate::events::effects::Moved {
        usage: &sorted.usage,
        changed,
        egress_seconds,
        stamp,
    };
    crate::events::effects::apply_effects(conn, store, parts, moved, now_ms).await?;
    store.failpoints.hit("fold.after_effects")?;
    let t_written = t0.elapsed();
    store.failpoints.hit("fold.before_offsets")?;
    let recorded = crate::events::commands::Recorded {
        now_ms,
        stamp: fold_stamp,
        dead_letters,
    };
    record_fold(conn, store, parts, recorded).await?;
    advance_offsets(conn, parts).await?;
    count_outcomes(&sorted.outcomes);
    metrics::histogram!("gpubill_batch_duration_seconds").record(t0.elapsed().as_secs_f64());
    tracing::debug!(
        records = batch.len(),
        keys = sorted.usage.len(),
        decode_dedupe_us = t_dedupe.as_micros() as u64,
        decode_us = t_decode.as_micros() as u64,
        identities_us = (t_identities - t_decode).as_micros() as u64,
        ledger_us = (t_ledger - t_dedupe).as_micros() as u64,
        side_tables_us = (t_side - t_ledger).as_micros() as u64,
        effects_us = (t_written - t_side).as_micros() as u64,
        total_us = t0.elapsed().as_micros() as u64,
        "folded batch"
    );
    Ok(sorted.outcomes)
}

/// A Kafka consumer's fold is recorded with the commands (issue 30), in its transaction: the
/// records it folded and the clock and numbers it used, what `gpubill replay` folds again.
/// The embedded log needs no record: it keeps each record's ingest time itself.
async fn record_fold(
    conn: &mut dyn Conn,
    store: &Store,
    parts: &[Part<'_>],
    recorded: crate::events::commands::Recorded,
) -> Result<()> {
    let Some((first, _)) = parts.first() else {
        return Ok(());
    };
    if first.consumer == EMBEDDED_CONSUMER {
        return Ok(());
    }
    let folded: Vec<crate::events::commands::FoldedPart> = parts
        .iter()
        .filter_map(|(at, records)| {
            let last = records.last()?.0;
            Some(crate::events::commands::FoldedPart {
                partition: at.partition,
                from: at.expected_next,
                to: last + 1,
            })
        })
        .collect();
    if folded.is_empty() {
        return Ok(());
    }
    let command = crate::events::commands::Command::Folded {
        consumer: first.consumer.to_string(),
        parts: folded,
        now_ms: recorded.now_ms,
        stamp: recorded.stamp,
        dead_letters: recorded.dead_letters,
        dead_letter_topic: first.dead_letter_topic.map(String::from),
    };
    store.record_command(conn, &command, recorded.now_ms).await
}

/// Decodes every record. An event ending further in the future than the clock plus the
/// accepted future is refused (`too_early`) before it can name an identity, and so is one
/// ending before the dedupe horizon (`too_late`): its identity may be gone.
fn decode_batch<'a>(
    store: &Store,
    batch: &Records<'a>,
    now_ms: i64,
) -> Vec<Result<AnyEvent<'a>, Rejection>> {
    let now_s = now_ms.div_euclid(1000);
    let latest_end = now_s.saturating_add(store.max_future_s);
    let earliest_end = now_s.saturating_sub(store.dedupe_horizon_s);
    batch
        .iter()
        .map(|(_, _, r)| {
            decode_any(r)
                .and_then(|e| e.ending_by(latest_end))
                .and_then(|e| e.ending_after(earliest_end))
        })
        .collect()
}

/// Fencing: only the writer that read the offset a part starts at may advance it.
async fn advance_offsets(conn: &mut dyn Conn, parts: &[Part<'_>]) -> Result<()> {
    for (at, records) in parts {
        let Some(&(last_seq, _)) = records.last() else {
            continue;
        };
        crate::conn::db::query(include_str!("../../queries/shared/insert_offset.sql"))
            .bind(at.consumer)
            .bind(at.partition)
            .bind(at.expected_next)
            .execute(&mut *conn)
            .await?;
        let moved = crate::conn::db::query(include_str!("../../queries/shared/advance_offset.sql"))
            .bind(last_seq + 1)
            .bind(at.consumer)
            .bind(at.partition)
            .bind(at.expected_next)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        if moved != 1 {
            return Err(StoreError::Fenced {
                expected: at.expected_next,
            });
        }
    }
    Ok(())
}

/// Metrics (base units, low-cardinality labels): every dead letter counted with its reason.
fn count_outcomes(outcomes: &[Vec<Outcome>]) {
    for o in outcomes.iter().flatten() {
        match o {
            Outcome::Accepted => {
                metrics::counter!("gpubill_events_total", "outcome" => "accepted").increment(1)
            }
            Outcome::Duplicate => {
                metrics::counter!("gpubill_events_total", "outcome" => "duplicate").increment(1)
            }
            Outcome::Rejected { reason, .. } => {
                metrics::counter!("gpubill_events_total", "outcome" => "rejected").increment(1);
                metrics::counter!("gpubill_dead_letters_total", "reason" => reason.as_str())
                    .increment(1);
            }
        }
    }
}

/// A batch folding for longer than this is logged as a warning (size and latency, no SQL).
const SLOW_BATCH: std::time::Duration = std::time::Duration::from_secs(1);

impl Store {
    pub(crate) async fn append_and_fold(
        &self,
        records: &[Vec<u8>],
        now_ms: i64,
    ) -> Result<Vec<Outcome>> {
        // A record over the size limit is logged (and folded) as its bounded stand-in: it is
        // rejected alike, and the log keeps ~1 KiB of it instead of megabytes.
        let stored: Vec<std::borrow::Cow<'_, [u8]>> = records
            .iter()
            .map(|r| billing_core::event::stored_form(r))
            .collect();
        let t0 = std::time::Instant::now();
        let mut tx = self.begin_fold(&[(EMBEDDED_CONSUMER, 0)]).await?;
        let first: i64 =
            crate::conn::db::query(include_str!("../../queries/shared/select_next_log_seq.sql"))
                .fetch_one(&mut *tx)
                .await?
                .get("seq");
        let rows: Vec<Vec<Val>> = stored
            .iter()
            .enumerate()
            .map(|(i, r)| {
                vec![
                    Val::I64(first + i as i64),
                    Val::Bytes(r.to_vec()),
                    Val::I64(now_ms),
                ]
            })
            .collect();
        insert_rows(
            &mut tx,
            include_str!("../../queries/shared/insert_log.sql"),
            "",
            rows,
        )
        .await?;
        tracing::debug!(
            records = records.len(),
            append_us = t0.elapsed().as_micros() as u64,
            "appended to the log"
        );
        let batch: Vec<(i64, &[u8])> = stored
            .iter()
            .enumerate()
            .map(|(i, r)| (first + i as i64, r.as_ref()))
            .collect();
        let result = fold(&mut tx, self, &batch, now_ms).await;
        finish(tx, result).await
    }

    pub(crate) async fn catch_up_locked(&self, now_ms: i64) -> Result<u64> {
        let mut folded = 0;
        loop {
            let mut tx = self.begin_fold(&[(EMBEDDED_CONSUMER, 0)]).await?;
            let next: i64 = crate::conn::db::query(include_str!(
                "../../queries/shared/select_embedded_offset.sql"
            ))
            .bind(EMBEDDED_CONSUMER)
            .fetch_one(&mut *tx)
            .await?
            .get("next_offset");
            let rows =
                crate::conn::db::query(include_str!("../../queries/shared/select_log_from.sql"))
                    .bind(next)
                    .fetch_all(&mut *tx)
                    .await?;
            if rows.is_empty() {
                return Ok(folded);
            }
            let owned: Vec<(i64, Vec<u8>)> = rows
                .into_iter()
                .map(|r| (r.get("seq"), r.get("payload")))
                .collect();
            let batch: Vec<(i64, &[u8])> = owned.iter().map(|(s, p)| (*s, p.as_slice())).collect();
            let result = fold(&mut tx, self, &batch, now_ms).await;
            finish(tx, result).await?;
            folded += batch.len() as u64;
        }
    }
}
