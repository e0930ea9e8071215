//! A batch's effects, after its rows are written and in its transaction: the provisional
//! costs of the accounts it moved, their quota decisions and notifications.

use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::store::Store;
use crate::events::batch::{KeyInsert, Spans};
use crate::events::records::Part;
use std::collections::{BTreeMap, HashMap};

/// What a batch moved of the ledger, for its effects.
pub(crate) struct Moved<'b, 'a> {
    /// Usage spans per key.
    pub(crate) usage: &'b HashMap<String, (KeyInsert<'a>, Spans<'a>)>,
    /// The keys whose stored runs changed, per account, as stored.
    pub(crate) changed: HashMap<String, Vec<crate::ledger::ledger_cache::ChangedKey>>,
    /// (account, second) of each egress row and account rental fact.
    pub(crate) egress_seconds: Vec<(String, i64)>,
    /// The ledger tokens of the moved accounts.
    pub(crate) stamp: crate::ledger::ledger_cache::Stamp,
}

/// Provisional costs of the accounts this batch moved, then their quota decisions, in its
/// transaction. `moved` (account → the `[first, last]` seconds of its usage and egress) is
/// what is re-rated; `latest_usage` (account → latest usage second) names the period
/// decisions are taken in. Every moved account gets a fresh ledger token (`ledger_cache`).
pub(crate) async fn apply_effects(
    conn: &mut dyn Conn,
    store: &Store,
    parts: &[Part<'_>],
    batch: Moved<'_, '_>,
    now_ms: i64,
) -> Result<()> {
    let Moved {
        usage,
        changed,
        egress_seconds,
        stamp,
    } = batch;
    let mut moved: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    let mut latest_usage: BTreeMap<String, i64> = BTreeMap::new();
    for (k, spans) in usage.values() {
        let account = moved.entry(k.account.to_string()).or_default();
        account.extend(spans.iter().map(|&(from, to, _, _)| (from, to - 1)));
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
    if moved.is_empty() {
        return Ok(());
    }
    let memory = crate::pricing::provisional::InMemory {
        cache: &store.ledger_cache,
        stamp: &stamp,
        changed: &changed,
        // Egress and rental facts are not applied in memory: those accounts are read again.
        reread: egress_seconds.iter().map(|(a, _)| a.as_str()).collect(),
    };
    let position = serde_json::Value::Array(
        parts
            .iter()
            .filter_map(|(at, records)| {
                let last = records.last()?.0;
                Some(serde_json::json!({"consumer": at.consumer, "partition": at.partition, "next_offset": last + 1}))
            })
            .collect(),
    );
    let books = store.books(conn).await?;
    let measured = crate::pricing::provisional::update(
        conn,
        store.backend,
        &books.1,
        &moved,
        &memory,
        &position,
        now_ms,
    )
    .await?;
    crate::quota::decisions::evaluate(
        conn,
        store.backend,
        &books.1,
        &latest_usage,
        &measured,
        &position,
        &store.topics().quota,
        now_ms,
    )
    .await?;
    // Issue 28: budgets, balance alerts and arrears, from the same state: the accounts whose
    // usage or egress moved, each at its latest second in the batch.
    let mut notify_at = latest_usage;
    for (account, secs) in &egress_seconds {
        let e = notify_at.entry(account.clone()).or_insert(*secs);
        *e = (*e).max(*secs);
    }
    crate::notify::evaluate::after_batch(
        conn, store, &books.1, &notify_at, &measured, &position, now_ms,
    )
    .await
}
