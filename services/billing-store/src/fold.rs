//! Folding a batch of log records into the store, in one transaction.

use crate::identities::{NewIdentity, identity};
use crate::keys::key_id;
use crate::sql::{MAX_IN_LIST, Val, bind, insert_rows};
use crate::{Backend, EMBEDDED_CONSUMER, MAX_BATCH_RECORDS, Result, Store, StoreError};
use billing_core::event::{Event, EventData, RejectReason, Rejection, decode};
use billing_core::ledger::Runs;
use serde::Serialize;
use sqlx::{AnyConnection, Row};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What became of one record of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Accepted,
    Duplicate,
    Rejected {
        reason: RejectReason,
        detail: String,
    },
}

impl Store {
    /// Appends `records` to the log and folds them, all in one transaction; answers only once
    /// it is committed. Records already in the log but not yet folded are folded first.
    pub async fn ingest(&self, records: Vec<Vec<u8>>, now_ms: i64) -> Result<Vec<Outcome>> {
        if records.len() > MAX_BATCH_RECORDS {
            return Err(StoreError::BatchTooLarge(records.len()));
        }
        let _w = self.writer.lock().await;
        match self.append_and_fold(&records, now_ms).await {
            // Records in the log that were never folded (appended by another writer, or left
            // by a crash of one): fold them first, then this batch.
            Err(StoreError::Fenced { .. }) => {
                self.catch_up_locked(now_ms).await?;
                self.append_and_fold(&records, now_ms).await
            }
            other => other,
        }
    }

    async fn append_and_fold(&self, records: &[Vec<u8>], now_ms: i64) -> Result<Vec<Outcome>> {
        // A record over the size limit is logged (and folded) as its bounded stand-in: it is
        // rejected alike, and the log keeps ~1 KiB of it instead of megabytes.
        let stored: Vec<std::borrow::Cow<'_, [u8]>> = records
            .iter()
            .map(|r| billing_core::event::stored_form(r))
            .collect();
        let mut tx = self.begin_fold(&[(EMBEDDED_CONSUMER, 0)]).await?;
        let first: i64 = sqlx::query("select coalesce(max(seq), 0) + 1 from log")
            .fetch_one(&mut *tx)
            .await?
            .get(0);
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
            "insert into log (seq, payload, received_at_ms)",
            "",
            rows,
        )
        .await?;
        let batch: Vec<(i64, &[u8])> = stored
            .iter()
            .enumerate()
            .map(|(i, r)| (first + i as i64, r.as_ref()))
            .collect();
        let result = fold(&mut tx, self, &batch, now_ms).await;
        finish(tx, result).await
    }

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
        let _w = self.writer.lock().await;
        let mut tx = self.begin_fold(&[(at.consumer, at.partition)]).await?;
        let result = fold_at(&mut tx, self, at, records, now_ms).await;
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

    /// [`Store::fold_partitions`] that awaits `before_commit` with the batch folded and its
    /// transaction (and locks) still open: a fault-injection point for tests of concurrent
    /// engines ("one engine's transaction held open, the others keep folding").
    pub async fn fold_partitions_then(
        &self,
        parts: &[Part<'_>],
        now_ms: i64,
        before_commit: impl std::future::Future<Output = ()>,
    ) -> Result<Vec<Vec<Outcome>>> {
        let _w = self.writer.lock().await;
        let locks: Vec<(&str, i64)> = parts
            .iter()
            .map(|(at, _)| (at.consumer, at.partition))
            .collect();
        let mut tx = self.begin_fold(&locks).await?;
        let result = fold_parts(&mut tx, self, parts, now_ms).await;
        if result.is_ok() {
            before_commit.await;
        }
        finish(tx, result).await
    }

    /// The stored next offset of a consumer's partition, if any.
    pub async fn stored_offset(&self, consumer: &str, partition: i64) -> Result<Option<i64>> {
        let row = sqlx::query(
            "select next_offset from consumer_offsets where consumer = $1 and partition = $2",
        )
        .bind(consumer)
        .bind(partition)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn catch_up_locked(&self, now_ms: i64) -> Result<u64> {
        let mut folded = 0;
        loop {
            let mut tx = self.begin_fold(&[(EMBEDDED_CONSUMER, 0)]).await?;
            let next: i64 = sqlx::query(
                "select next_offset from consumer_offsets where consumer = $1 and partition = 0",
            )
            .bind(EMBEDDED_CONSUMER)
            .fetch_one(&mut *tx)
            .await?
            .get(0);
            let rows =
                sqlx::query("select seq, payload from log where seq >= $1 order by seq limit 1000")
                    .bind(next)
                    .fetch_all(&mut *tx)
                    .await?;
            if rows.is_empty() {
                return Ok(folded);
            }
            let owned: Vec<(i64, Vec<u8>)> =
                rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
            let batch: Vec<(i64, &[u8])> = owned.iter().map(|(s, p)| (*s, p.as_slice())).collect();
            let result = fold(&mut tx, self, &batch, now_ms).await;
            finish(tx, result).await?;
            folded += batch.len() as u64;
        }
    }
}

/// Commits when the batch folded, rolls back at once when it did not: not when the pool gets
/// to it, because the caller may retry straight away and SQLite refuses a writer while the
/// failed transaction still holds its snapshot.
async fn finish<T>(tx: sqlx::Transaction<'_, sqlx::Any>, result: Result<T>) -> Result<T> {
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

/// The new intervals of one usage key in a batch: `[from, to)` at a quantity.
type Spans = Vec<(i64, i64, rust_decimal::Decimal)>;

/// A usage key touched by a batch.
struct KeyInsert<'a> {
    account: &'a str,
    lease: &'a str,
    resource: &'a str,
    sku: &'a str,
    class: billing_core::Class,
}

/// Decodes, dedupes and folds `batch` (log records in sequence order) and advances the offset
/// past it with compare-and-set. The caller owns the transaction.
pub(crate) async fn fold(
    conn: &mut AnyConnection,
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

/// One partition's share of a batch: its position and its records (offset, payload).
pub type Part<'a> = (Position<'a>, &'a [(i64, &'a [u8])]);

/// Where a batch comes from: a consumer's partition and the offset the batch must start the
/// stored position at (compare-and-set).
#[derive(Debug, Clone, Copy)]
pub struct Position<'a> {
    pub consumer: &'a str,
    pub partition: i64,
    /// The stored next offset this batch continues from (absent rows count as this value).
    pub expected_next: i64,
    /// Where rejected records go besides the dead-letter table: an outbox row for this topic,
    /// written in the same transaction (relayed to Kafka afterwards).
    pub dead_letter_topic: Option<&'a str>,
}

/// [`fold`] for any consumer position: records carry their offsets (which may have gaps).
/// Runs in a `fold_batch` span (exported to OpenTelemetry when configured) that records the
/// batch's position, outcome counts, dead letters by reason and latency.
pub(crate) async fn fold_at(
    conn: &mut AnyConnection,
    store: &Store,
    at: Position<'_>,
    batch: &[(i64, &[u8])],
    now_ms: i64,
) -> Result<Vec<Outcome>> {
    let mut out = fold_parts(conn, store, &[(at, batch)], now_ms).await?;
    Ok(out.pop().unwrap_or_default())
}

/// Several partitions' records in one transaction (one span, one commit): each part moves its
/// own stored position with compare-and-set; outcomes per part, in record order.
pub(crate) async fn fold_parts(
    conn: &mut AnyConnection,
    store: &Store,
    parts: &[Part<'_>],
    now_ms: i64,
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
    let result = fold_inner(conn, store, parts, now_ms)
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

async fn fold_inner(
    conn: &mut AnyConnection,
    store: &Store,
    parts: &[Part<'_>],
    now_ms: i64,
) -> Result<Vec<Vec<Outcome>>> {
    let backend = store.backend;
    // Records in part order, each part in offset order: within a partition "the first one
    // stands" is the first in the partition's order.
    let batch: Vec<(usize, i64, &[u8])> = parts
        .iter()
        .enumerate()
        .flat_map(|(i, (_, b))| b.iter().map(move |(o, r)| (i, *o, *r)))
        .collect();
    let t0 = std::time::Instant::now();
    // An event ending further in the future than the clock plus the accepted future is refused
    // (`too_early`) before it can name an identity.
    // So is one ending before the dedupe horizon (`too_late`): its identity may be gone.
    let now_s = now_ms.div_euclid(1000);
    let latest_end = now_s.saturating_add(store.max_future_s);
    let earliest_end = now_s.saturating_sub(store.dedupe_horizon_s);
    let decoded: Vec<Result<Event<'_>, Rejection>> = batch
        .iter()
        .map(|(_, _, r)| {
            decode(r)
                .and_then(|e| e.ending_by(latest_end))
                .and_then(|e| e.ending_after(earliest_end))
        })
        .collect();

    // Dedupe. The first occurrence of each identity in the batch is written to the
    // authoritative events table straight away (`on conflict do nothing`); identities the
    // table held already come back as not inserted, and only their stored fingerprints are
    // read, to tell a duplicate from a conflict. One write per event and a read per
    // redelivery, instead of a read and a write per event.
    let mut scratch = Vec::new();
    let fps: Vec<u128> = decoded
        .iter()
        .map(|d| d.as_ref().map_or(0, |e| e.fingerprint_with(&mut scratch)))
        .collect();
    let mut firsts: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, d) in decoded.iter().enumerate() {
        if let Ok(e) = d {
            firsts
                .entry((e.source.as_ref(), e.id.as_ref()))
                .or_insert(i);
        }
    }
    let mut candidates: Vec<usize> = firsts.values().copied().collect();
    candidates.sort_unstable();
    let idents: Vec<[u8; 16]> = decoded
        .iter()
        .map(|d| d.as_ref().map_or([0; 16], |e| identity(&e.source, &e.id)))
        .collect();
    let rows: Vec<NewIdentity<'_>> = candidates
        .iter()
        .filter_map(|&i| {
            let e = decoded[i].as_ref().ok()?;
            Some(NewIdentity {
                ident: idents[i],
                source: &e.source,
                id: &e.id,
                fingerprint: fps[i],
                account: &e.subject,
                log_seq: batch[i].1,
                end_s: e.end_secs(),
            })
        })
        .collect();
    let mut seen: HashMap<[u8; 16], u128> = crate::identities::insert(conn, backend, &rows).await?;

    let closed: Vec<(String, i64, i64)> = sqlx::query("select period, start_s, end_s from periods")
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();

    let mut outcomes: Vec<Vec<Outcome>> = parts
        .iter()
        .map(|(_, b)| Vec::with_capacity(b.len()))
        .collect();
    let mut dead: Vec<Vec<Val>> = Vec::new();
    let mut dead_topics: Vec<Option<&str>> = Vec::new();
    let mut egress: Vec<Vec<Val>> = Vec::new();
    let mut late: Vec<Vec<Val>> = Vec::new();
    let mut usage: HashMap<String, (KeyInsert<'_>, Spans)> = HashMap::new();
    for (n, ((part, seq, raw), d)) in batch.iter().zip(&decoded).enumerate() {
        let outcomes = &mut outcomes[*part];
        let dead_topic = parts[*part].0.dead_letter_topic;
        let e = match d {
            Err(r) => {
                dead.push(dead_row(*seq, r, raw, now_ms));
                dead_topics.push(dead_topic);
                outcomes.push(Outcome::Rejected {
                    reason: r.reason,
                    detail: r.detail.clone(),
                });
                continue;
            }
            Ok(e) => e,
        };
        let fp = fps[n];
        let ident = (e.source.to_string(), e.id.to_string());
        match seen.get(&idents[n]) {
            Some(&first) if first == fp => {
                outcomes.push(Outcome::Duplicate);
                continue;
            }
            Some(_) => {
                let mut r = Rejection::new(
                    RejectReason::Conflict,
                    format!(
                        "(source {:?}, id {:?}) was seen before with different content; the first one stands",
                        e.source, e.id
                    ),
                );
                r.source = Some(ident.0);
                r.id = Some(ident.1);
                dead.push(dead_row(*seq, &r, raw, now_ms));
                dead_topics.push(dead_topic);
                outcomes.push(Outcome::Rejected {
                    reason: r.reason,
                    detail: r.detail,
                });
                continue;
            }
            None => {
                seen.insert(idents[n], fp);
            }
        }
        // Accepted: its events row was written above (it is the identity's first occurrence).
        outcomes.push(Outcome::Accepted);
        let (from, to) = match &e.data {
            EventData::Usage(u) => {
                let (from, to) = u.seconds();
                let id = key_id(&e.subject, &u.lease, &u.resource, &u.sku, u.class);
                let entry = usage.entry(id).or_insert_with(|| {
                    (
                        KeyInsert {
                            account: &e.subject,
                            lease: &u.lease,
                            resource: &u.resource,
                            sku: &u.sku,
                            class: u.class,
                        },
                        Vec::new(),
                    )
                });
                entry.1.push((from, to, u.quantity));
                (from, to)
            }
            EventData::Egress(x) => {
                egress.push(vec![
                    Val::Text(ident.0.clone()),
                    Val::Text(ident.1.clone()),
                    Val::Text(e.subject.to_string()),
                    Val::Text(x.dest.to_string()),
                    Val::I64(x.time.secs),
                    Val::I64(x.time.nanos as i64),
                    // u64 in a signed 64-bit column, bit for bit (read back `as u64`): counts
                    // above i64::MAX stay exact, as the offline rater keeps them.
                    Val::I64(x.bytes as i64),
                ]);
                (x.time.secs, x.time.secs + 1)
            }
        };
        for (period, start, end) in &closed {
            if from < *end && *start < to {
                late.push(vec![
                    Val::Text(ident.0.clone()),
                    Val::Text(ident.1.clone()),
                    Val::Text(e.subject.to_string()),
                    Val::Text(period.clone()),
                    Val::I64(*seq),
                ]);
            }
        }
    }

    let t_dedupe = t0.elapsed();
    // Ledger: load the touched keys, fold the new intervals in, write them back.
    let key_ids: Vec<&String> = usage.keys().collect();
    let mut existing: HashMap<String, Runs> = HashMap::new();
    for chunk in key_ids.chunks(MAX_IN_LIST) {
        let sql = format!(
            "select key_id, runs from ledger_keys where {}",
            in_json_array("key_id", backend)
        );
        let q = sqlx::query(&sql).bind(serde_json::to_string(chunk).unwrap_or_default());
        for r in q.fetch_all(&mut *conn).await? {
            let runs: Runs = serde_json::from_str(&r.get::<String, _>(1))
                .map_err(|e| StoreError::Corrupt(format!("ledger runs: {e}")))?;
            existing.insert(r.get(0), runs);
        }
    }
    let mut ledger_rows = Vec::with_capacity(usage.len());
    for (id, (k, spans)) in &usage {
        let mut runs = existing.remove(id).unwrap_or_default();
        let mut changed = false;
        for &(from, to, q) in spans {
            changed |= runs.insert(from, to, q);
        }
        if !changed {
            continue;
        }
        let slice = runs.as_slice();
        ledger_rows.push(vec![
            Val::Text(id.clone()),
            Val::Text(k.account.to_string()),
            Val::Text(k.lease.to_string()),
            Val::Text(k.resource.to_string()),
            Val::Text(k.sku.to_string()),
            Val::Text(k.class.as_str().to_string()),
            Val::Text(
                serde_json::to_string(&runs).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ),
            Val::I64(slice[0].from),
            Val::I64(slice[slice.len() - 1].to),
        ]);
    }
    insert_rows(
        conn,
        "insert into ledger_keys (key_id, account, lease, resource, sku, class, runs, first_s, end_s)",
        "on conflict (key_id) do update set runs = excluded.runs, first_s = excluded.first_s, end_s = excluded.end_s",
        ledger_rows,
    )
    .await?;
    let egress_seconds: Vec<(String, i64)> = egress
        .iter()
        .filter_map(|row| match (&row[2], &row[4]) {
            (Val::Text(account), Val::I64(secs)) => Some((account.clone(), *secs)),
            _ => None,
        })
        .collect();
    insert_rows(
        conn,
        "insert into egress (source, id, account, dest, time_s, time_ns, bytes)",
        "",
        egress,
    )
    .await?;
    insert_rows(
        conn,
        "insert into late_usage (source, id, account, period, log_seq)",
        "on conflict do nothing",
        late,
    )
    .await?;
    let outbox: Vec<Vec<Val>> = dead
        .iter()
        .zip(&dead_topics)
        .filter_map(|(row, topic)| Some(dead_letter_outbox((*topic)?, row, now_ms)))
        .collect();
    insert_rows(
        conn,
        "insert into outbox (topic, key, payload, created_at_ms, headers)",
        "",
        outbox,
    )
    .await?;
    insert_rows(conn, "insert into dead_letters (log_seq, reason, detail, source, event_id, payload, created_at_ms)", "", dead).await?;

    // Usage arriving for a lease consumes the lease's live holds (two-phase: a pending hold
    // is posted by the usage it stood for; the usage itself now counts, through the ledger).
    let mut leases: Vec<LeaseRef<'_>> = usage
        .values()
        .map(|(k, _)| LeaseRef {
            a: k.account,
            l: k.lease,
        })
        .collect();
    // Holds past their expiry are marked first (every read treats them as expired already;
    // marking keeps the live ones few). Authorizations only insert holds, so this never waits
    // for them.
    // Only the batch's own accounts: folds of other partitions run concurrently and must not
    // contend for each other's rows.
    let accounts: BTreeSet<&str> = leases.iter().map(|l| l.a).collect();
    if !accounts.is_empty() {
        let json =
            serde_json::to_string(&accounts).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query(expire_holds_sql(backend))
            .bind(now_ms)
            .bind(json)
            .execute(&mut *conn)
            .await?;
    }
    leases.sort_unstable_by(|x, y| (x.a, x.l).cmp(&(y.a, y.l)));
    leases.dedup_by(|x, y| (x.a, x.l) == (y.a, y.l));
    if !leases.is_empty() {
        let json =
            serde_json::to_string(&leases).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let captured: std::collections::BTreeSet<String> = sqlx::query(capture_holds_sql(backend))
            .bind(now_ms)
            .bind(json)
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .map(|r| r.get(0))
            .collect();
        // Their accounts' cached holds (authorization) are no longer the stored ones. In account
        // order, as authorization groups bump them: two transactions never wait on each other
        // in a circle.
        for account in &captured {
            crate::quota::bump_hold_rev(conn, account).await?;
        }
    }

    // Provisional costs of the accounts this batch moved, then their quota decisions, in its
    // transaction. `moved`: account → the `[first, last]` seconds of its usage and egress;
    // `latest_usage`: account → latest usage second (the period decisions are taken in).
    let mut moved: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    let mut latest_usage: BTreeMap<String, i64> = BTreeMap::new();
    for (k, spans) in usage.values() {
        let account = moved.entry(k.account.to_string()).or_default();
        account.extend(spans.iter().map(|&(from, to, _)| (from, to - 1)));
        let last = spans.iter().map(|s| s.1 - 1).max().unwrap_or(0);
        let e = latest_usage.entry(k.account.to_string()).or_insert(last);
        *e = (*e).max(last);
    }
    for (account, secs) in &egress_seconds {
        moved
            .entry(account.clone())
            .or_default()
            .push((*secs, *secs));
    }
    let position = serde_json::Value::Array(
        parts
            .iter()
            .filter_map(|(at, records)| {
                let last = records.last()?.0;
                Some(serde_json::json!({"consumer": at.consumer, "partition": at.partition, "next_offset": last + 1}))
            })
            .collect(),
    );
    if !moved.is_empty() {
        let books = store.books(conn).await?;
        let measured =
            crate::provisional::update(conn, backend, &books.1, &moved, &position, now_ms).await?;
        crate::decisions::evaluate(
            conn,
            backend,
            &books.1,
            &latest_usage,
            &measured,
            &position,
            &store.topics().quota,
            now_ms,
        )
        .await?;
    }

    let t_written = t0.elapsed();
    // Fencing: only the writer that read the offset a part starts at may advance it.
    for (at, records) in parts {
        let Some(&(last_seq, _)) = records.last() else {
            continue;
        };
        sqlx::query("insert into consumer_offsets (consumer, partition, next_offset) values ($1, $2, $3) on conflict (consumer, partition) do nothing")
            .bind(at.consumer)
            .bind(at.partition)
            .bind(at.expected_next)
            .execute(&mut *conn)
            .await?;
        let moved = bind(
            bind(
                sqlx::query("update consumer_offsets set next_offset = $1 where consumer = $2 and partition = $3 and next_offset = $4"),
                Val::I64(last_seq + 1),
            ),
            Val::Text(at.consumer.into()),
        )
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
    // Metrics (base units, low-cardinality labels): every dead letter counted with its reason.
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
    metrics::histogram!("gpubill_batch_duration_seconds").record(t0.elapsed().as_secs_f64());
    tracing::debug!(
        records = batch.len(),
        keys = usage.len(),
        decode_dedupe_us = t_dedupe.as_micros() as u64,
        ledger_and_writes_us = (t_written - t_dedupe).as_micros() as u64,
        total_us = t0.elapsed().as_micros() as u64,
        "folded batch"
    );
    Ok(outcomes)
}

#[derive(Serialize)]
struct LeaseRef<'a> {
    a: &'a str,
    l: &'a str,
}

/// Marks the live holds past their expiry at `$1` of the accounts in `$2` (a JSON array).
fn expire_holds_sql(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => {
            "update holds set status = 'expired', closed_at_ms = expires_at_ms where status = 'live' \
             and expires_at_ms <= $1 and account = any(array(select jsonb_array_elements_text(cast($2 as jsonb))))"
        }
        Backend::Sqlite => {
            "update holds set status = 'expired', closed_at_ms = expires_at_ms where status = 'live' \
             and expires_at_ms <= $1 and account in (select value from json_each($2))"
        }
    }
}

/// Marks live holds of the leases in `$2` (a JSON array of [`LeaseRef`]) captured at `$1`.
fn capture_holds_sql(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => {
            "update holds set status = 'captured', closed_at_ms = $1 where status = 'live' \
             and expires_at_ms > $1 and exists (select 1 from json_to_recordset(cast($2 as json)) as x(a text, l text) \
             where x.a = holds.account and x.l = holds.lease) returning account"
        }
        Backend::Sqlite => {
            "update holds set status = 'captured', closed_at_ms = $1 where status = 'live' \
             and expires_at_ms > $1 and exists (select 1 from json_each($2) j where json_extract(j.value, '$.a') = holds.account \
             and json_extract(j.value, '$.l') = holds.lease) returning account"
        }
    }
}

/// A batch folding for longer than this is logged as a warning (size and latency, no SQL).
const SLOW_BATCH: std::time::Duration = std::time::Duration::from_secs(1);

/// `column` is one of the strings of the JSON array bound as `$1`: one parameter for up to a
/// thousand values, written so that both databases look them up through the column's index
/// (PostgreSQL plans `in (subquery)` as a hash join over the whole table; `= any(array)` is an
/// index scan).
pub(crate) fn in_json_array(column: &str, backend: Backend) -> String {
    match backend {
        Backend::Postgres => {
            format!("{column} = any(array(select jsonb_array_elements_text(cast($1 as jsonb))))")
        }
        Backend::Sqlite => format!("{column} in (select value from json_each($1))"),
    }
}

/// The outbox row that sends a dead letter (a row of `dead_row`) to the dead-letter topic:
/// the record as received, its reason and detail in headers, keyed by its source.
fn dead_letter_outbox(topic: &str, dead: &[Val], now_ms: i64) -> Vec<Val> {
    let text = |v: &Val| match v {
        Val::Text(s) => s.clone(),
        Val::OptText(s) => s.clone().unwrap_or_default(),
        Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    let headers =
        serde_json::json!({ "gpubill-reason": text(&dead[1]), "gpubill-detail": text(&dead[2]) });
    vec![
        Val::Text(topic.to_string()),
        Val::Text(text(&dead[3])),
        Val::Text(text(&dead[5])),
        Val::I64(now_ms),
        Val::Text(headers.to_string()),
    ]
}

fn dead_row(seq: i64, r: &Rejection, raw: &[u8], now_ms: i64) -> Vec<Val> {
    vec![
        Val::OptI64(Some(seq)),
        Val::Text(r.reason.as_str().to_string()),
        Val::Text(r.detail.clone()),
        Val::OptText(r.source.clone()),
        Val::OptText(r.id.clone()),
        Val::Bytes(billing_core::event::kept_payload(raw).to_vec()),
        Val::I64(now_ms),
    ]
}
