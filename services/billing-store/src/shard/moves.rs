//! Moving an organization tree from one shard to another, online (issue 29).
//!
//! 1. **Target: copying.** The target records the move as `copying`: from its commit, the
//!    target's folds wait on any record of the tree (the batch is read again later).
//! 2. **Source: let go.** On one connection the source takes its writer and holds locks for
//!    the session (its folds, closes, commands and authorizations wait), then in one
//!    repeatable-read transaction reads its stored positions of the usage topic (the
//!    **cutover**: every record before it was folded by the source, every record from it on is
//!    the target's), records the move as `active` with that cutover, and reads the tree's rows
//!    of every table ([`TABLES`]) with `COPY ... TO STDOUT`.
//! 3. **Target: rows in.** In one transaction the target writes the rows with `COPY ... FROM
//!    STDIN`; the columns a sequence numbers (decisions, wallet movements, notifications,
//!    payments) take the target's next numbers in the source's order, and references to
//!    renumbered notifications follow. It records the cutover, still `copying`.
//! 4. **Source: rows out.** The source deletes the tree's rows and commits; its locks go.
//! 5. **Target: active.** The target's folds take the tree's records from the cutover on.
//!
//! A failure before 4 commits leaves the source holding the tree (its transaction rolls
//! back) and the target `copying`: [`abandon_move`] removes what the target copied, and the
//! move can be made again. A failure between 4 and 5 is finished by making the move again (it
//! finds the source let go, and activates). Both shards must be PostgreSQL stores of the same
//! schema, price book and closed periods.

use super::key::{Shard, root_of};
use super::moved::{MovedIn, MovedOut};
use super::placements::{Placements, cutover_text};
use super::tables::{TABLES, copy_in, copy_out, staged};
use crate::conn::db::Pool;
use crate::conn::error::{Result, StoreError};
use crate::conn::store::Store;
use sqlx::{PgPool, Row};
use std::collections::{BTreeMap, BTreeSet};

/// What a move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveReport {
    pub root: String,
    pub from: u32,
    pub to: u32,
    /// The move's number in the tree's history (1 for its first).
    pub moves: i64,
    /// The tree's accounts and billing domains that moved.
    pub accounts: Vec<String>,
    /// Rows carried, per table (tables without any left out).
    pub rows: BTreeMap<String, u64>,
    /// Per partition of the usage topic, the first offset the target folds.
    pub cutover: BTreeMap<i64, i64>,
}

fn pg(store: &Store) -> Result<&PgPool> {
    match &store.pool {
        Pool::Pg(p) => Ok(p),
        Pool::Lite(_) => Err(StoreError::Move {
            root: String::new(),
            why: "shards are PostgreSQL databases; this store is SQLite".into(),
        }),
    }
}

fn refuse(root: &str, why: impl Into<String>) -> StoreError {
    StoreError::Move {
        root: root.to_string(),
        why: why.into(),
    }
}

/// Moves the tree `root` from `source` to `target` (see the module header). `usage_topic` is
/// the topic whose stored positions make the cutover.
pub async fn move_tree(
    source: &Store,
    target: &Store,
    root: &str,
    usage_topic: &str,
    now_ms: i64,
) -> Result<MoveReport> {
    let (from, to) = shards_of(source, target, root)?;
    let (spool, tpool) = (pg(source)?, pg(target)?);
    same_platform(spool, tpool, root).await?;
    let placements = {
        let mut c = source.pool.acquire().await?;
        Placements::load(&mut c).await?
    };
    let target_placements = {
        let mut c = target.pool.acquire().await?;
        Placements::load(&mut c).await?
    };
    // A move whose source let go but whose target was not activated: finish it (nothing is
    // carried again: the rows are there).
    if let Some((seq, cutover)) = pending(&placements, &target_placements, root, to) {
        activate(tpool, root, seq).await?;
        return Ok(MoveReport {
            root: root.to_string(),
            from: from.index,
            to: to.index,
            moves: seq,
            accounts: Vec::new(),
            rows: BTreeMap::new(),
            cutover,
        });
    }
    if !placements.holds_now(from, root) {
        return Err(refuse(root, format!("shard {from} does not hold it")));
    }
    if target_placements
        .moves
        .get(root)
        .and_then(|h| h.last())
        .is_some_and(|m| !m.active)
    {
        return Err(refuse(
            root,
            "an earlier move to this target did not finish: abandon it first (gpubill shards abandon)",
        ));
    }
    // 1. The target waits on the tree's records.
    let history = placements.moves.get(root).cloned().unwrap_or_default();
    let seq = history.last().map_or(1, |m| m.seq + 1);
    start_copying(tpool, root, &history, (seq, to), now_ms).await?;
    // 2 to 4, the source holding its locks.
    let leaving = Leaving {
        source,
        target,
        root,
        seq,
        to,
        history,
        usage_topic,
        now_ms,
    };
    let (accounts, rows, cutover) = let_go(&leaving).await?;
    source.failpoints.hit("move.before_activate")?;
    // 5. The target takes the tree's records from the cutover on.
    activate(tpool, root, seq).await?;
    Ok(MoveReport {
        root: root.to_string(),
        from: from.index,
        to: to.index,
        moves: seq,
        accounts,
        rows,
        cutover,
    })
}

/// Step 1: the target records the move as `copying` (after the tree's earlier moves, as the
/// source knows them), so its folds wait on the tree's records.
pub(crate) async fn start_copying(
    tpool: &PgPool,
    root: &str,
    history: &[super::placements::Placement],
    (seq, to): (i64, Shard),
    now_ms: i64,
) -> Result<()> {
    {
        let mut tx = tpool.begin().await?;
        for m in history {
            sqlx::query(
                "insert into tree_moves (root, seq, shard, cutover, state, moved_at_ms) \
                 values ($1, $2, $3, $4, 'active', $5) on conflict (root, seq) do nothing",
            )
            .bind(root)
            .bind(m.seq)
            .bind(i64::from(m.shard))
            .bind(m.cutover.as_ref().map(cutover_text))
            .bind(m.moved_at_ms)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(
            "insert into tree_moves (root, seq, shard, cutover, state, moved_at_ms) \
             values ($1, $2, $3, null, 'copying', $4)",
        )
        .bind(root)
        .bind(seq)
        .bind(i64::from(to.index))
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
    Ok(())
}

/// Steps 2 to 4 ([`carry`]) with the source's writer and holds locks taken for the session
/// and given back whatever happened.
async fn let_go(leaving: &Leaving<'_>) -> Result<Carried> {
    let mut sconn = pg(leaving.source)?.acquire().await?;
    async {
        for key in [
            crate::conn::locks::WRITER_LOCK,
            crate::conn::locks::HOLDS_LOCK,
        ] {
            sqlx::query("select pg_advisory_lock($1)")
                .bind(key)
                .execute(&mut *sconn)
                .await?;
        }
        let result = carry(leaving, &mut sconn).await;
        for key in [
            crate::conn::locks::HOLDS_LOCK,
            crate::conn::locks::WRITER_LOCK,
        ] {
            sqlx::query("select pg_advisory_unlock($1)")
                .bind(key)
                .execute(&mut *sconn)
                .await?;
        }
        result
    }
    .await
}

/// A move of `root` to `to` that the source let go of and the target did not activate yet:
/// its number and cutover.
fn pending(
    source: &Placements,
    target: &Placements,
    root: &str,
    to: Shard,
) -> Option<(i64, BTreeMap<i64, i64>)> {
    let last = target.moves.get(root)?.last()?;
    if last.shard != to.index || last.active {
        return None;
    }
    let done = source
        .moves
        .get(root)?
        .last()
        .filter(|m| m.seq == last.seq && m.shard == to.index && m.active)?;
    Some((last.seq, done.cutover.clone().unwrap_or_default()))
}

type Carried = (Vec<String>, BTreeMap<String, u64>, BTreeMap<i64, i64>);

/// A move under way, from the source's side.
struct Leaving<'a> {
    source: &'a Store,
    target: &'a Store,
    root: &'a str,
    seq: i64,
    to: Shard,
    /// The tree's earlier moves, as the source knows them.
    history: Vec<super::placements::Placement>,
    /// The topic whose stored positions make the cutover.
    usage_topic: &'a str,
    now_ms: i64,
}

/// Steps 2 to 4, on the source's connection holding its locks.
async fn carry(leaving: &Leaving<'_>, sconn: &mut sqlx::PgConnection) -> Result<Carried> {
    let Leaving {
        source,
        target,
        root,
        seq,
        to,
        usage_topic,
        now_ms,
        ..
    } = *leaving;
    sqlx::query("begin isolation level repeatable read")
        .execute(&mut *sconn)
        .await?;
    let result = async {
        let cutover: BTreeMap<i64, i64> =
            sqlx::query("select partition, next_offset from consumer_offsets where consumer = $1")
                .bind(usage_topic)
                .fetch_all(&mut *sconn)
                .await?
                .into_iter()
                .map(|r| (r.get::<i64, _>("partition"), r.get::<i64, _>("next_offset")))
                .collect();
        let out = MovedOut {
            root,
            seq,
            to: to.index,
            cutover: &cutover,
            at_ms: now_ms,
        };
        let (accounts, numbers) = leave(source, sconn, &out).await?;
        let mut tables = Vec::new();
        for table in TABLES {
            let data = copy_out(sconn, &table.select()).await?;
            tables.push((table.name.to_string(), hex::encode(data)));
        }
        // 3. The rows into the target, with the cutover, in one transaction.
        let moved_in = MovedIn {
            root: root.to_string(),
            seq,
            nonce: crate::ledger::ledger_cache::fresh_token()?,
            shard: to.index,
            history: leaving.history.clone(),
            cutover: cutover.clone(),
            numbers,
            tables,
            at_ms: now_ms,
        };
        let rows = write_target(target, &moved_in).await?;
        source.failpoints.hit("move.before_source_commit")?;
        // 4. The rows out of the source: dependent tables first.
        delete_rows(sconn).await?;
        source
            .record_command(&mut *sconn, &out.command(), now_ms)
            .await?;
        Ok::<_, StoreError>((accounts, rows, cutover))
    }
    .await;
    match result {
        Ok(done) => {
            sqlx::query("commit").execute(&mut *sconn).await?;
            Ok(done)
        }
        Err(e) => {
            let _ = sqlx::query("rollback").execute(&mut *sconn).await;
            Err(e)
        }
    }
}

/// On the source, in its transaction: records the move as `active` with its cutover, stages
/// the tree's accounts and series (for [`Table::select`] and [`delete_rows`]) and notes its
/// documents as moved out. Returns the accounts and the documents' numbers.
pub(crate) async fn leave(
    source: &Store,
    sconn: &mut sqlx::PgConnection,
    out: &MovedOut<'_>,
) -> Result<(Vec<String>, Vec<String>)> {
    let accounts = tree_accounts(source, sconn, out.root).await?;
    sqlx::query(
        "insert into tree_moves (root, seq, shard, cutover, state, moved_at_ms) \
         values ($1, $2, $3, $4, 'active', $5)",
    )
    .bind(out.root)
    .bind(out.seq)
    .bind(i64::from(out.to))
    .bind(cutover_text(out.cutover))
    .bind(out.at_ms)
    .execute(&mut *sconn)
    .await?;
    stage_accounts(sconn, &accounts, &tree_series_of(source, out.root)).await?;
    let numbers: Vec<String> = sqlx::query(
        "select t.number from invoices t join moving_accounts m on t.account = m.account \
         union all select t.number from credit_notes t join moving_accounts m on t.account = m.account",
    )
    .fetch_all(&mut *sconn)
    .await?
    .into_iter()
    .map(|r| r.get::<String, _>("number"))
    .collect();
    note_documents(&mut *sconn, &numbers, out.root, false, out.at_ms).await?;
    Ok((accounts, numbers))
}

/// Deletes the staged tree's rows of every table, dependent tables first.
pub(crate) async fn delete_rows(conn: &mut sqlx::PgConnection) -> Result<()> {
    for table in TABLES.iter().rev() {
        sqlx::query(&table.delete()).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The accounts and billing domains of the tree `root` the source knows: every id of its
/// account tables and of the price book's organization whose root is `root`.
async fn tree_accounts(
    source: &Store,
    sconn: &mut sqlx::PgConnection,
    root: &str,
) -> Result<Vec<String>> {
    let known: Vec<String> = sqlx::query(
        "select id as account from accounts \
         union select account from ledger_tokens union select account from account_terms \
         union select account from wallets union select account from quotas \
         union select account from notify_settings union select account from api_keys \
         union select account from account_profiles union select account from invoices \
         union select account from provisional_costs \
         union select account from webhook_endpoints where account is not null",
    )
    .fetch_all(&mut *sconn)
    .await?
    .into_iter()
    .map(|r| r.get::<String, _>("account"))
    .collect();
    let books = {
        let mut c = source.pool.acquire().await?;
        source.books(&mut c).await?
    };
    let book = books.1.latest();
    let mut ids: BTreeSet<String> = known.into_iter().collect();
    if let Some(b) = book {
        ids.extend(b.org.accounts().map(String::from));
    }
    ids.insert(root.to_string());
    Ok(ids
        .into_iter()
        .filter(|id| root_of(book, id) == root)
        .collect())
}

/// Step 3: every table's rows into the target, renumbering where a sequence numbers them,
/// and the rows recorded in the target's outbox (`tree.moved_in`, for its replay), on the
/// target `store`.
pub(crate) async fn write_target(store: &Store, moved: &MovedIn) -> Result<BTreeMap<String, u64>> {
    let mut tx = pg(store)?.begin().await?;
    note_documents(&mut tx, &moved.numbers, &moved.root, true, moved.at_ms).await?;
    let mut rows = BTreeMap::new();
    for (name, data) in &moved.tables {
        let table = TABLES.iter().find(|t| t.name == name).ok_or_else(|| {
            StoreError::Corrupt(format!("a move carries rows of an unknown table {name:?}"))
        })?;
        let data = hex::decode(data)
            .map_err(|e| StoreError::Corrupt(format!("a move's rows of {name}: {e}")))?;
        let n = if table.renumbered.is_none() && table.notification.is_none() {
            copy_in(&mut tx, table.name, data).await?
        } else {
            staged(&mut tx, table, data).await?
        };
        if n > 0 {
            rows.insert(table.name.to_string(), n);
        }
    }
    sqlx::query("update tree_moves set cutover = $3 where root = $1 and seq = $2")
        .bind(&moved.root)
        .bind(moved.seq)
        .bind(cutover_text(&moved.cutover))
        .execute(&mut *tx)
        .await?;
    for command in moved.commands()? {
        store
            .record_command(&mut *tx, &command, moved.at_ms)
            .await?;
    }
    tx.commit().await?;
    Ok(rows)
}

/// Notes the documents numbered `numbers` as moved out (`here` false) or in (`gpubill
/// verify` reads it: a shard's series miss what moved out, and hold what came from others').
async fn note_documents(
    conn: &mut sqlx::PgConnection,
    numbers: &[String],
    root: &str,
    here: bool,
    now_ms: i64,
) -> Result<()> {
    sqlx::query(
        "insert into moved_documents (number, root, here, moved_at_ms) \
         select unnest($1::text[]), $2, $3, $4 on conflict (number) do update \
         set root = excluded.root, here = excluded.here, moved_at_ms = excluded.moved_at_ms",
    )
    .bind(numbers)
    .bind(root)
    .bind(i64::from(here))
    .bind(now_ms)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The tree's accounts into `moving_accounts` and its number series into `moving_series`,
/// temporary tables of the transaction, which [`Table::select`] and [`Table::delete`] join.
async fn stage_accounts(
    conn: &mut sqlx::PgConnection,
    accounts: &[String],
    series: &[String],
) -> Result<()> {
    for (table, column, values) in [
        ("moving_accounts", "account", accounts),
        ("moving_series", "series", series),
    ] {
        sqlx::query(&format!(
            "create temp table {table} ({column} text primary key) on commit drop"
        ))
        .execute(&mut *conn)
        .await?;
        sqlx::query(&format!("insert into {table} select unnest($1::text[])"))
            .bind(values)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The tree's own number series on `store` (`numbering::tree_series` of every prefix: the
/// store's and each region's).
fn tree_series_of(store: &Store, root: &str) -> Vec<String> {
    let mut prefixes = vec![&store.invoice_prefix, &store.credit_note_prefix];
    for (invoice, note) in store.region_prefixes.values() {
        prefixes.extend([invoice, note]);
    }
    prefixes
        .into_iter()
        .map(|p| billing_core::numbering::tree_series(p, root))
        .collect()
}

pub(crate) async fn activate(tpool: &PgPool, root: &str, seq: i64) -> Result<()> {
    sqlx::query("update tree_moves set state = 'active' where root = $1 and seq = $2")
        .bind(root)
        .bind(seq)
        .execute(tpool)
        .await?;
    Ok(())
}

/// Undoes a move that failed before the source let go: the target's copied rows of the tree
/// (if its transaction committed) and its `copying` record. Refused when the source did let
/// go (make the move again instead: it finishes it).
pub async fn abandon_move(source: &Store, target: &Store, root: &str, now_ms: i64) -> Result<()> {
    let (_, to) = shards_of(source, target, root)?;
    let (spool, tpool) = (pg(source)?, pg(target)?);
    let last = {
        let mut c = target.pool.acquire().await?;
        Placements::load(&mut c).await?
    }
    .moves
    .get(root)
    .and_then(|h| h.last().cloned());
    let Some(last) = last.filter(|m| !m.active && m.shard == to.index) else {
        return Err(refuse(
            root,
            format!("shard {to} has no unfinished move of it"),
        ));
    };
    let let_go: bool =
        sqlx::query("select count(*) > 0 as done from tree_moves where root = $1 and seq = $2")
            .bind(root)
            .bind(last.seq)
            .fetch_one(spool)
            .await?
            .get("done");
    if let_go {
        return Err(refuse(
            root,
            "the source let go of it already: make the move again to finish it",
        ));
    }
    let mut tx = tpool.begin().await?;
    remove_copied(source, &mut tx, root, last.seq).await?;
    let abandoned = crate::events::commands::Command::TreeMoveAbandoned {
        root: root.to_string(),
        seq: last.seq,
        nonce: crate::ledger::ledger_cache::fresh_token()?,
        at_ms: now_ms,
    };
    target.record_command(&mut *tx, &abandoned, now_ms).await?;
    tx.commit().await?;
    Ok(())
}

/// On the target, in its transaction: the rows of `root` a move copied, and the move's
/// record. `store` names the deployment's number prefixes and price book.
pub(crate) async fn remove_copied(
    store: &Store,
    tx: &mut sqlx::PgConnection,
    root: &str,
    seq: i64,
) -> Result<()> {
    let accounts = tree_accounts(store, tx, root).await?;
    stage_accounts(tx, &accounts, &tree_series_of(store, root)).await?;
    delete_rows(tx).await?;
    sqlx::query("delete from tree_moves where root = $1 and seq = $2")
        .bind(root)
        .bind(seq)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The two stores' shards: both shards of one deployment, not the same one.
fn shards_of(source: &Store, target: &Store, root: &str) -> Result<(Shard, Shard)> {
    let (Some(from), Some(to)) = (source.shard, target.shard) else {
        return Err(refuse(root, "both stores must be shards (--shard I/N)"));
    };
    if from.count != to.count {
        return Err(refuse(
            root,
            format!("shards {from} and {to} are not of one deployment"),
        ));
    }
    if from.index == to.index {
        return Err(refuse(
            root,
            format!("source and target are both shard {from}"),
        ));
    }
    Ok((from, to))
}

/// The two shards agree on what rates a tree: schema, price book versions, closed periods.
async fn same_platform(spool: &PgPool, tpool: &PgPool, root: &str) -> Result<()> {
    for (what, sql) in [
        (
            "schema version",
            "select coalesce(max(version), 0)::text as v from _sqlx_migrations",
        ),
        (
            "price book versions",
            "select coalesce(string_agg(version::text || ':' || md5(toml), ',' order by version), '') as v from pricebooks",
        ),
        (
            "closed periods",
            "select coalesce(string_agg(period, ',' order by period), '') as v from periods where closed_at_ms is not null",
        ),
    ] {
        let a: String = sqlx::query(sql).fetch_one(spool).await?.get("v");
        let b: String = sqlx::query(sql).fetch_one(tpool).await?.get("v");
        if a != b {
            return Err(refuse(
                root,
                format!("the shards' {what} differ ({a:?} on the source, {b:?} on the target)"),
            ));
        }
    }
    Ok(())
}
