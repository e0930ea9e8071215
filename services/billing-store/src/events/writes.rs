//! The rows a fold writes once its records are sorted: the ledger keys (runs and coverage by
//! source, one statement each way per batch) and the side tables (egress, rental facts, late
//! notes, dead letters and their outbox rows). Split from `fold.rs`, which decides; this
//! module only saves.

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::sql::{MAX_IN_LIST, Val, in_list, insert_rows};
use crate::events::batch::{KeyInsert, Sorted, Spans};
use crate::events::dead_letters::dead_letter_outbox;
use crate::ledger::ledger_cache::{ChangedKey, LedgerCache, Stamp};
use billing_core::ledger::{ResourceKey, Runs};
use std::collections::HashMap;

pub(crate) use crate::ledger::ledger_cache::Sources;

/// The ledger: loads the touched keys, folds the new intervals in, writes back the ones
/// that changed (one statement each way per batch). Returns the changed keys per account, as
/// stored (for the ledgers kept in memory, see `ledger_cache`). (Over 80 lines: load, merge
/// and write with their timings logged as one phase; the merge itself is `billing_core`'s.)
pub(crate) async fn write_ledger(
    conn: &mut dyn Conn,
    backend: Backend,
    usage: &HashMap<String, (KeyInsert<'_>, Spans<'_>)>,
    kept: (&std::sync::Mutex<LedgerCache>, &Stamp),
) -> Result<HashMap<String, Vec<ChangedKey>>> {
    let t0 = std::time::Instant::now();
    let (mut existing, key_ids, new_keys) = stored_keys(conn, backend, usage, kept).await?;
    let t_read = t0.elapsed();
    let mut ledger_rows = Vec::with_capacity(usage.len());
    let mut new_rows = Vec::new();
    let mut changed_keys: HashMap<String, Vec<ChangedKey>> = HashMap::new();
    for (id, (k, spans)) in usage {
        let (mut runs, mut sources) = existing.remove(id).unwrap_or_default();
        let mut changed = false;
        for &(from, to, q, source) in spans {
            changed |= runs.insert(from, to, q);
            // The source's name is allocated only when it first covers the key.
            changed |= match sources.get_mut(source) {
                Some(by_source) => by_source.insert(from, to, q),
                None => sources
                    .entry(source.to_string())
                    .or_default()
                    .insert(from, to, q),
            };
        }
        if !changed {
            continue;
        }
        let slice = runs.as_slice();
        let rows = if new_keys.contains(id) {
            &mut new_rows
        } else {
            &mut ledger_rows
        };
        rows.push(vec![
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
            Val::Text(
                serde_json::to_string(&sources).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ),
        ]);
        let key = ResourceKey {
            lease: k.lease.into(),
            resource: k.resource.into(),
            sku: k.sku.into(),
            class: k.class,
        };
        changed_keys
            .entry(k.account.to_string())
            .or_default()
            .push((key, runs, sources));
    }
    let t_merged = t0.elapsed();
    let new_count = new_rows.len();
    // In key order: each leaf of the key index is visited once, and two folds that copy the
    // same keys lock them in the same order.
    new_rows.sort_unstable_by(|a, b| match (&a[0], &b[0]) {
        (Val::Text(a), Val::Text(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    });
    save_keys(conn, backend, ledger_rows, new_rows).await?;
    tracing::debug!(
        keys = usage.len(),
        read_keys = key_ids.len(),
        new_keys = new_count,
        read_us = t_read.as_micros() as u64,
        merge_us = (t_merged - t_read).as_micros() as u64,
        write_us = (t0.elapsed() - t_merged).as_micros() as u64,
        "ledger keys"
    );
    Ok(changed_keys)
}

/// The stored runs and coverage of the keys `usage` touches: from the kept ledgers where
/// their account's entry is valid, else read (one statement per [`MAX_IN_LIST`] keys).
/// Returns them, the ids that were read, and those of the keys neither kept nor stored (new).
async fn stored_keys<'u>(
    conn: &mut dyn Conn,
    backend: Backend,
    usage: &'u HashMap<String, (KeyInsert<'_>, Spans<'_>)>,
    kept: (&std::sync::Mutex<LedgerCache>, &Stamp),
) -> Result<(
    HashMap<String, (Runs, Sources)>,
    Vec<&'u String>,
    std::collections::HashSet<&'u String>,
)> {
    // Keys whose account's ledger is kept and valid come from memory; the others are read.
    let mut existing: HashMap<String, (Runs, Sources)> = HashMap::new();
    let mut key_ids: Vec<&String> = Vec::new();
    {
        let (cache, stamp) = kept;
        let cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        for (id, (k, _)) in usage {
            let stored = stamp.before.get(&*k.account).copied();
            match cache.stored_key(&k.account, stored, (k.lease, k.resource, k.sku, k.class)) {
                Some(known) => {
                    existing.insert(id.clone(), known);
                }
                None => key_ids.push(id),
            }
        }
    }
    for chunk in key_ids.chunks(MAX_IN_LIST) {
        let sql = include_str!("../../queries/shared/select_ledger_keys.sql")
            .replace("{filter}", &in_list("key_id", backend));
        let q = crate::conn::db::query(&sql).bind(chunk);
        for r in q.fetch_all(&mut *conn).await? {
            let runs: Runs = serde_json::from_str(&r.get::<String, _>("runs"))
                .map_err(|e| StoreError::Corrupt(format!("ledger runs: {e}")))?;
            let sources =
                crate::ledger::ledgers::parse_sources(r.get::<Option<String>, _>("sources"))?;
            existing.insert(r.get("key_id"), (runs, sources));
        }
    }
    // Keys neither kept nor stored are new: their rows are plain inserts.
    let new_keys: std::collections::HashSet<&'u String> = key_ids
        .iter()
        .copied()
        .filter(|id| !existing.contains_key(*id))
        .collect();
    Ok((existing, key_ids, new_keys))
}

/// Writes the ledger rows: `stored` (keys the table holds) by the upsert, `new` (keys it did
/// not hold when the fold read them, under the accounts' token locks) on PostgreSQL by a
/// binary `COPY` under a savepoint, a plain insert costing about a third of the upsert's
/// speculative insertion (docs/benchmarks.md, "Ledger keys"). Should another writer have
/// stored one of them meanwhile, the `COPY` is rolled back to the savepoint and they take
/// the upsert too.
async fn save_keys(
    conn: &mut dyn Conn,
    backend: Backend,
    mut stored: Vec<Vec<Val>>,
    new: Vec<Vec<Val>>,
) -> Result<()> {
    let head = include_str!("../../queries/shared/upsert_ledger_keys.sql");
    let tail = include_str!("../../queries/shared/upsert_ledger_keys_on_conflict.sql");
    if backend == Backend::Postgres && !new.is_empty() {
        if !crate::conn::sql::copy_under_savepoint(conn, "new_ledger_keys", head, &new).await? {
            stored.extend(new);
        }
    } else {
        stored.extend(new);
    }
    insert_rows(conn, head, tail, stored).await?;
    Ok(())
}

/// Egress rows, late-usage notes, dead letters and their outbox rows (moved out of `sorted`).
/// Returns the (account, second) of each egress row, for the effects. (Over 80 lines: one
/// batched insert per side table, side by side.)
pub(crate) async fn write_side_tables(
    conn: &mut dyn Conn,
    sorted: &mut Sorted<'_>,
    (now_ms, stamp): (i64, i64),
    dead_letters: &[i64],
) -> Result<Vec<(String, i64)>> {
    let egress_seconds = moved_seconds(sorted);
    // Every fact with its ingest time (issue 12, as-known-at; migration 0018) and its fold's
    // stamp (migration 0020: what `verify` orders facts and closes by).
    let stamped = |rows: Vec<Vec<Val>>| -> Vec<Vec<Val>> {
        rows.into_iter()
            .map(|mut r| {
                r.push(Val::I64(now_ms));
                r.push(Val::I64(stamp));
                r
            })
            .collect()
    };
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_rental_events.sql"),
        include_str!("../../queries/shared/insert_rental_events_on_conflict.sql"),
        stamped(std::mem::take(&mut sorted.rental)),
    )
    .await?;
    let facts: Vec<Vec<Val>> = sorted
        .usage
        .values()
        .flat_map(|(k, spans)| {
            spans.iter().map(move |(from, to, quantity, source)| {
                vec![
                    Val::Text(k.account.to_string()),
                    Val::Text(k.lease.to_string()),
                    Val::Text(k.resource.to_string()),
                    Val::Text(k.sku.to_string()),
                    Val::Text(k.class.as_str().to_string()),
                    Val::Text(source.to_string()),
                    Val::I64(*from),
                    Val::I64(*to),
                    Val::Text(quantity.to_string()),
                    Val::I64(now_ms),
                    Val::I64(stamp),
                ]
            })
        })
        .collect();
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_usage_facts.sql"),
        "",
        facts,
    )
    .await?;
    for note in std::mem::take(&mut sorted.platform_late) {
        let mut q = crate::conn::db::query(include_str!(
            "../../queries/shared/insert_platform_late_usage.sql"
        ));
        for v in note {
            q = q.bind(v);
        }
        q.execute(&mut *conn).await?;
    }
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_egress.sql"),
        "",
        stamped(std::mem::take(&mut sorted.egress)),
    )
    .await?;
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_late_usage.sql"),
        include_str!("../../queries/shared/insert_late_usage_on_conflict.sql"),
        std::mem::take(&mut sorted.late),
    )
    .await?;
    let outbox: Vec<Vec<Val>> = sorted
        .dead
        .iter()
        .filter_map(|(row, topic)| Some(dead_letter_outbox((*topic)?, row, now_ms)))
        .collect();
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_outbox_with_headers.sql"),
        "",
        outbox,
    )
    .await?;
    // Numbered as given (`dead_letter_numbers`): a replay numbers them as the original did.
    let dead: Vec<Vec<Val>> = std::mem::take(&mut sorted.dead)
        .into_iter()
        .zip(dead_letters)
        .map(|((row, _), n)| std::iter::once(Val::I64(*n)).chain(row).collect())
        .collect();
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_dead_letters.sql"),
        "",
        dead,
    )
    .await?;
    Ok(egress_seconds)
}

/// The (account, second) of each egress row and account rental fact: what moves its cost.
fn moved_seconds(sorted: &Sorted<'_>) -> Vec<(String, i64)> {
    // Egress and account rental events (lease states, counter samples) move their account's
    // cost at their second.
    let mut egress_seconds: Vec<(String, i64)> = sorted
        .egress
        .iter()
        .filter_map(|row| match (&row[2], &row[4]) {
            (Val::Text(account), Val::I64(secs)) => Some((account.clone(), *secs)),
            _ => None,
        })
        .collect();
    egress_seconds.extend(
        sorted
            .rental
            .iter()
            .filter_map(|row| match (&row[1], &row[3]) {
                (Val::Text(account), Val::I64(at)) if !account.is_empty() => {
                    Some((account.clone(), *at))
                }
                _ => None,
            }),
    );
    egress_seconds
}

/// The next fold stamp (migration 0020), drawn by every fold and every close under the writer
/// lock (PostgreSQL: folds hold it shared, a close exclusively; SQLite: one writer), so a fact
/// stamped below a close's stamp was committed before that close: what `verify` rates an
/// issued invoice from, whatever the clocks of concurrent folds and closes read.
/// The stamp of a fold or close: `given` (a replay gives the recorded one, issue 30; the
/// sequence is moved past it so that later stamps stay above it), or the next one.
pub(crate) async fn stamp(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    given: Option<i64>,
) -> Result<i64> {
    let Some(given) = given else {
        return next_stamp(conn, backend).await;
    };
    crate::conn::db::query(backend.sql(crate::conn::dialect::Statement::RaiseFoldStamp))
        .bind(given)
        .execute(conn)
        .await?;
    Ok(given)
}

/// The numbers of `n` new dead letters: `given` (a replay gives the recorded ones, issue 30;
/// the numbering is moved past them), or the next ones.
pub(crate) async fn dead_letter_numbers(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    n: usize,
    given: Option<&[i64]>,
) -> Result<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if let Some(given) = given {
        if given.len() != n {
            return Err(StoreError::Corrupt(format!(
                "a recorded fold numbered {} dead letters, its replay has {n}: the records differ",
                given.len()
            )));
        }
        backend
            .raise_dead_letter_numbers(conn, given.iter().copied().max().unwrap_or(0))
            .await?;
        return Ok(given.to_vec());
    }
    let mut numbers = backend.next_dead_letter_numbers(conn, n).await?;
    numbers.sort_unstable();
    Ok(numbers)
}

pub(crate) async fn next_stamp(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
) -> Result<i64> {
    let sql = backend.sql(crate::conn::dialect::Statement::NextFoldStamp);
    Ok(crate::conn::db::query(sql)
        .fetch_one(conn)
        .await?
        .get("stamp"))
}
