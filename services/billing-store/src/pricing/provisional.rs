//! Provisional cost (issue 5): each account's open period rated so far, kept up to date as the
//! log is folded rather than computed when someone asks.
//!
//! In the transaction of every batch, each account whose ledger the batch moved (usage or
//! egress) has the periods the batch touched re-rated with the invoices' own function
//! ([`rate_account`], credits left over from issued invoices applied) and the result written to
//! `provisional_costs`: the provisional invoice, its total, and the unit-seconds per sku that
//! `gpu_hours` quotas measure. "Incremental" is per batch and per touched account: an account the
//! batch did not touch is not re-rated, and nothing is rated on read. There is no second pricing
//! implementation, so the stored figure equals a fresh rating of the ledger at the batch's
//! position by construction (and the tests check it after every batch).
//!
//! What else changes a rating is handled where it happens: a price book upload re-rates every
//! stored row in its transaction; a close drops the closed period's rows (the invoice replaces
//! them) and re-rates the others (the credits the invoice consumed are gone for later periods).
//! A period nobody's batch touched yet (no row) is rated on read with the same function (a
//! reservation fee is owed before any usage arrives).
//!
//! Choices: a batch touches, for each account, the periods that hold any second of its usage
//! or egress in the batch, and only those (periods named in the latest price book version's
//! timezone, the version that rates a period chosen as a close chooses it); closed periods are
//! not re-rated (late usage never changes an issued invoice).

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::sql::{Val, insert_rows};
use crate::ledger::ledger_cache::{ChangedKey, LedgerCache, Stamp};
use crate::ledger::ledgers::load_ledgers;
use crate::pricing::books::Books;
use crate::pricing::payers::{member_ids, payer_first, payer_id};
use billing_core::domain::{Domain, Domains};
use billing_core::ledger::AccountLedger;
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{RateMonthError, Rated as CoreRated};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub(crate) use crate::pricing::loaded::{Loaded, Measure, UnitSeconds, measure_of, rate_period};

/// An (account, period) rated for storing: the row's values, or None when the ledger cannot
/// be rated (egress beyond any amount): then the row goes, and a read rates again and reports
/// the error, so that a fold never stops on it.
struct Rated {
    total: Decimal,
    unit_seconds: UnitSeconds,
    body: String,
    units: String,
}

async fn rate_one(
    conn: &mut dyn Conn,
    books: &Books,
    loaded: &Loaded,
    account: &str,
    label: &str,
) -> Result<Option<Option<Vec<(String, Rated)>>>> {
    let Some((book, period)) = books.for_period(conn, label).await? else {
        return Ok(None);
    };
    stored(account, label, loaded.rate(account, &book, &period)).map(Some)
}

/// A rating's outcome as stored: the rows' values, or None when it failed (logged). The
/// payer's row first (its invoice, with its allocation when it has members), then, section
/// 18, a row per member with an allocation row: its allocated total and unit-seconds, and
/// as body its part (`{"payer", "allocation"}`), which quotas and authorizations of the
/// member measure.
fn stored(
    account: &str,
    label: &str,
    rated: std::result::Result<CoreRated, RateMonthError>,
) -> Result<Option<Vec<(String, Rated)>>> {
    let mut rated = match rated {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(account, period = label, error = %e, "provisional cost not rated");
            return Ok(None);
        }
    };
    let region = Domain::parse(account).region;
    let mut rows = Vec::new();
    let members: BTreeSet<&str> = rated
        .allocation
        .iter()
        .flatten()
        .map(|r| r.account.as_str())
        .chain(rated.usage_shares.keys().map(String::as_str))
        .filter(|m| Some(*m) != Some(Domain::parse(account).account))
        .collect();
    for member in members {
        let (total, unit_seconds) = rated.member_measure(member);
        let part: Vec<_> = rated
            .allocation
            .iter()
            .flatten()
            .filter(|r| r.account == member)
            .collect();
        let body = serde_json::json!({ "payer": account, "allocation": part });
        let id = Domain {
            account: member,
            region,
        }
        .id()
        .into_owned();
        rows.push((
            id,
            Rated {
                total,
                body: to_json(&body)?,
                units: to_json(&unit_seconds)?,
                unit_seconds,
            },
        ));
    }
    let unit_seconds = billing_core::quota::unit_seconds(&rated.invoice.lines);
    if rated.invoice.allocation.is_none() {
        rated.invoice.allocation = rated.allocation.take();
    }
    rows.insert(
        0,
        (
            account.to_string(),
            Rated {
                total: rated.invoice.total,
                body: to_json(&rated.invoice)?,
                units: to_json(&unit_seconds)?,
                unit_seconds,
            },
        ),
    );
    Ok(Some(rows))
}

async fn delete_one(conn: &mut dyn Conn, account: &str, label: &str) -> Result<()> {
    crate::conn::db::query(include_str!(
        "../../queries/shared/delete_provisional_cost.sql"
    ))
    .bind(account)
    .bind(label)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

const UPSERT_HEAD: &str = include_str!("../../queries/shared/upsert_provisional_costs.sql");
const UPSERT_TAIL: &str =
    include_str!("../../queries/shared/upsert_provisional_costs_on_conflict.sql");

/// The row of a rated (account, period); its invoice and unit-seconds texts move into it.
fn upsert_row(account: &str, label: &str, r: Rated, position: &str, now_ms: i64) -> Vec<Val> {
    vec![
        Val::Text(account.to_string()),
        Val::Text(label.to_string()),
        Val::Text(r.total.to_string()),
        Val::Text(r.units),
        Val::Text(r.body),
        Val::Text(position.to_string()),
        Val::I64(now_ms),
    ]
}

/// Rates and stores one (account, period) and its members' rows; `position` None keeps the
/// payer's stored one (a member's row then has none).
async fn store_one(
    conn: &mut dyn Conn,
    books: &Books,
    loaded: &Loaded,
    (account, label): (&str, &str),
    position: Option<&serde_json::Value>,
    now_ms: i64,
) -> Result<()> {
    let mut rows = match rate_one(conn, books, loaded, account, label).await? {
        None => return Ok(()),
        Some(None) => {
            delete_one(conn, account, label).await?;
            return Ok(());
        }
        Some(Some(r)) => r,
    };
    let (_, rated) = rows.remove(0);
    let member_position = position.map_or_else(|| "null".to_string(), |p| p.to_string());
    let members: Vec<Vec<Val>> = rows
        .into_iter()
        .map(|(id, r)| upsert_row(&id, label, r, &member_position, now_ms))
        .collect();
    match position {
        Some(p) => {
            let row = upsert_row(account, label, rated, &p.to_string(), now_ms);
            insert_rows(conn, UPSERT_HEAD, UPSERT_TAIL, vec![row]).await?;
        }
        None => {
            crate::conn::db::query(include_str!(
                "../../queries/shared/update_provisional_cost.sql"
            ))
            .bind(rated.total.to_string())
            .bind(rated.units)
            .bind(rated.body)
            .bind(now_ms)
            .bind(account)
            .bind(label)
            .execute(&mut *conn)
            .await?;
        }
    }
    if !members.is_empty() {
        insert_rows(conn, UPSERT_HEAD, UPSERT_TAIL, members).await?;
    }
    Ok(())
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Stores (account, period) when no row holds it yet (no batch touched it): what an account
/// whose quotas were just set is measured by, without rating on every authorization.
pub(crate) async fn ensure(
    conn: &mut dyn Conn,
    books: &Books,
    account: &str,
    label: &str,
    now_ms: i64,
) -> Result<()> {
    // Section 18: the row is the payer's, rated over its members.
    let Some((book, _)) = books.for_period(conn, label).await? else {
        return Ok(());
    };
    let ids = payer_first(&book, &payer_id(&book, account));
    let account = ids[0].as_str();
    let present = crate::conn::db::query(include_str!(
        "../../queries/shared/select_provisional_cost_exists.sql"
    ))
    .bind(account)
    .bind(label)
    .fetch_optional(&mut *conn)
    .await?
    .is_some();
    if !present && !closed_periods(conn).await?.contains(label) {
        let windows = books.windows(conn, &[label]).await?;
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let loaded = Loaded::read(conn, None, &ids, &windows).await?;
        let null = serde_json::Value::Null;
        store_one(conn, books, &loaded, (account, label), Some(&null), now_ms).await?;
    }
    Ok(())
}

/// Closed periods, by label.
async fn closed_periods(conn: &mut dyn Conn) -> Result<BTreeSet<String>> {
    Ok(crate::conn::db::query(include_str!(
        "../../queries/shared/select_closed_period_labels.sql"
    ))
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| r.get("period"))
    .collect())
}

/// What a fold keeps of ledgers in memory (see `ledger_cache`): the cache, the batch's
/// stamp, the keys it changed per account, and the accounts to read from the database
/// whatever the cache holds.
pub(crate) struct InMemory<'a> {
    pub(crate) cache: &'a std::sync::Mutex<LedgerCache>,
    pub(crate) stamp: &'a Stamp,
    pub(crate) changed: &'a HashMap<String, Vec<ChangedKey>>,
    pub(crate) reread: BTreeSet<&'a str>,
}

/// The ledgers of `touched` (account → the period labels to rate) for rating: from memory
/// where the cache's entry is valid for this batch (with the batch's changed keys applied),
/// the others read from the database. Returns them with the windows each is complete over.
async fn ledgers_for(
    conn: &mut dyn Conn,
    backend: Backend,
    books: &Books,
    touched: &[(&String, Vec<String>)],
    memory: &InMemory<'_>,
) -> Result<HashMap<String, (AccountLedger, Vec<(i64, i64)>)>> {
    let mut out = HashMap::new();
    let mut misses: Vec<&str> = Vec::new();
    let mut miss_labels: Vec<&String> = Vec::new();
    let mut wanted = Vec::with_capacity(touched.len());
    for (_, labels) in touched {
        wanted.push(books.windows(conn, labels.as_slice()).await?);
    }
    {
        let mut cache = memory.cache.lock().unwrap_or_else(|e| e.into_inner());
        for ((account, labels), windows) in touched.iter().zip(&wanted) {
            let before = memory.stamp.before.get(account.as_str()).copied();
            let hit = cache.take(account, before, windows);
            match hit.filter(|_| !memory.reread.contains(account.as_str())) {
                Some((mut ledger, windows)) => {
                    let changed = memory.changed.get(account.as_str());
                    crate::ledger::ledger_cache::apply(
                        &mut ledger,
                        changed.map_or(&[][..], Vec::as_slice),
                    );
                    metrics::counter!("gpubill_ledger_cache_total", "outcome" => "hit")
                        .increment(1);
                    out.insert(account.to_string(), (ledger, windows));
                }
                None => {
                    metrics::counter!("gpubill_ledger_cache_total", "outcome" => "miss")
                        .increment(1);
                    misses.push(account.as_str());
                    miss_labels.extend(labels);
                }
            }
        }
    }
    if !misses.is_empty() {
        // Never empty: every miss has a label.
        let windows = books.windows(conn, &miss_labels).await?;
        for (account, ledger) in load_ledgers(conn, Some(backend), &misses, &windows).await? {
            out.insert(account, (ledger, windows.clone()));
        }
    }
    Ok(out)
}

/// Section 18: the payers whose invoices the domains a batch moved (`touched`: domain ->
/// the open period labels) are on, each with its labels in order met, and every member of
/// those payers with the labels its ledger is read for (a payer is rated over all of them).
#[allow(clippy::type_complexity)]
fn payers_of_batch(
    touched: &[(&String, Vec<String>)],
    views: &BTreeMap<&str, (Arc<PriceBook>, Period)>,
) -> (
    BTreeMap<String, Vec<String>>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let mut payers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, labels) in touched {
        for label in labels {
            let Some((book, _)) = views.get(label.as_str()) else {
                continue;
            };
            let payer = payer_id(book, id);
            for m in member_ids(book, &payer) {
                members.entry(m).or_default().insert(label.clone());
            }
            let of_payer = payers.entry(payer).or_default();
            if !of_payer.contains(label) {
                of_payer.push(label.clone());
            }
        }
    }
    (payers, members)
}

/// In a batch's transaction: re-rates the periods the batch touched of every account it moved
/// (`touched`: account → the `[first, last]` seconds of its usage and egress in the batch),
/// stores them in one statement, and returns what quotas measure of each (account, period
/// label). The ledgers rated are kept in memory for the next batch (`memory`).
pub(crate) async fn update(
    conn: &mut dyn Conn,
    backend: Backend,
    books: &Books,
    touched: &BTreeMap<String, Vec<(i64, i64)>>,
    memory: &InMemory<'_>,
    position: &serde_json::Value,
    now_ms: i64,
) -> Result<HashMap<(String, String), Measure>> {
    let mut out = HashMap::new();
    if touched.is_empty() {
        return Ok(out);
    }
    let closed = closed_periods(conn).await?;
    // The open periods each account's batch touched, and only what rating them reads; an
    // account that touched only closed periods (late usage) is not re-rated.
    let touched: Vec<(&String, Vec<String>)> = touched
        .iter()
        .map(|(account, spans)| {
            let open = books.labels_holding(spans).into_iter();
            (
                account,
                open.filter(|l| !closed.contains(l)).collect::<Vec<_>>(),
            )
        })
        .filter(|(_, labels)| !labels.is_empty())
        .collect();
    if touched.is_empty() {
        return Ok(out);
    }
    // Each period's version and period once, and its regions' books once per batch (a
    // book with regional terms is copied per region).
    let mut views: BTreeMap<&str, (Arc<PriceBook>, Period)> = BTreeMap::new();
    for label in touched.iter().flat_map(|(_, labels)| labels) {
        if !views.contains_key(label.as_str())
            && let Some(view) = books.for_period(conn, label).await?
        {
            views.insert(label, view);
        }
    }
    let (payers, members) = payers_of_batch(&touched, &views);
    let to_load: Vec<(&String, Vec<String>)> = members
        .iter()
        .map(|(m, labels)| (m, labels.iter().cloned().collect()))
        .collect();
    let t0 = std::time::Instant::now();
    let ledgers = ledgers_for(conn, backend, books, &to_load, memory).await?;
    let t_ledgers = t0.elapsed();
    let accounts: Vec<&str> = payers.keys().map(String::as_str).collect();
    let (mut loaded, windows) = Loaded::read_without_ledgers(conn, backend, &accounts)
        .await?
        .with_ledgers(ledgers);
    let position = position.to_string();
    let mut rows = Vec::new();
    let mut domains: HashMap<&str, Domains<'_>> = views
        .iter()
        .map(|(label, (book, _))| (*label, Domains::new(book, &loaded.platform)))
        .collect();
    for (account, labels) in &payers {
        for label in labels {
            let (Some((book, period)), Some(domains)) =
                (views.get(label.as_str()), domains.get_mut(label.as_str()))
            else {
                continue;
            };
            let rated = stored(
                account,
                label,
                loaded.rate_in((domains, book), account, period),
            )?;
            match rated {
                None => delete_one(conn, account, label).await?,
                Some(rated) => {
                    for (id, mut r) in rated {
                        let measure = (r.total, std::mem::take(&mut r.unit_seconds));
                        rows.push(upsert_row(&id, label, r, &position, now_ms));
                        out.insert((id, label.clone()), measure);
                    }
                }
            }
        }
    }
    drop(domains);
    let t_rated = t0.elapsed();
    insert_rows(conn, UPSERT_HEAD, UPSERT_TAIL, rows).await?;
    tracing::debug!(
        accounts = payers.len(),
        ledgers_us = t_ledgers.as_micros() as u64,
        rate_us = (t_rated - t_ledgers).as_micros() as u64,
        write_us = (t0.elapsed() - t_rated).as_micros() as u64,
        "provisional costs"
    );
    let mut cache = memory.cache.lock().unwrap_or_else(|e| e.into_inner());
    // Only the batch's own domains are kept: a member it did not move was read at its own
    // token, not this batch's stamp.
    let moved: BTreeSet<&str> = touched.iter().map(|(id, _)| id.as_str()).collect();
    for (account, ledger) in loaded.ledgers.drain() {
        if !moved.contains(account.as_str()) {
            continue;
        }
        let w = windows.get(&account).cloned().unwrap_or_default();
        cache.put(account, memory.stamp.token, w, ledger);
    }
    Ok(out)
}

/// After a price book upload or a close (in its transaction): rows of closed periods go, every
/// other row is re-rated (the ledger did not move, so each keeps its position).
pub(crate) async fn refresh_all(
    conn: &mut dyn Conn,
    backend: Backend,
    books: &Books,
    now_ms: i64,
) -> Result<()> {
    let closed = closed_periods(conn).await?;
    let rows: Vec<(String, String)> = crate::conn::db::query(include_str!(
        "../../queries/shared/select_provisional_cost_keys.sql"
    ))
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| (r.get("account"), r.get("period")))
    .collect();
    let open: Vec<&String> = rows
        .iter()
        .map(|(_, l)| l)
        .filter(|l| !closed.contains(*l))
        .collect();
    // Section 18: a payer's row is rated over its members' ledgers, and writes its
    // members' rows; a row of an account that no longer pays for itself goes first.
    let mut payers: BTreeSet<(String, String)> = BTreeSet::new();
    let mut accounts: BTreeSet<String> = BTreeSet::new();
    for (account, label) in &rows {
        let book = match closed.contains(label) {
            true => None,
            false => books.for_period(conn, label).await?.map(|(b, _)| b),
        };
        let Some(book) = book else {
            delete_one(conn, account, label).await?;
            continue;
        };
        let payer = payer_id(&book, account);
        if payer != *account {
            delete_one(conn, account, label).await?;
        }
        accounts.extend(member_ids(&book, &payer));
        payers.insert((payer, label.clone()));
    }
    let accounts: Vec<&str> = accounts.iter().map(String::as_str).collect();
    let mut windows = books.windows(conn, &open).await?;
    if windows.is_empty() {
        // Every row is of a closed period: they went, nothing is rated (and "no windows"
        // would load everything).
        windows.push((0, 0));
    }
    let loaded = Loaded::read(conn, Some(backend), &accounts, &windows).await?;
    let held: BTreeSet<(&str, &str)> = rows.iter().map(|(a, l)| (a.as_str(), l.as_str())).collect();
    let null = serde_json::Value::Null;
    for (payer, label) in &payers {
        // A payer without a row of its own (its members had rows) gets one.
        let position = (!held.contains(&(payer.as_str(), label.as_str()))).then_some(&null);
        store_one(conn, books, &loaded, (payer, label), position, now_ms).await?;
    }
    Ok(())
}
