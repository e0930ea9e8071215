//! Event identities: what tells a redelivery (same source and id, same content: a duplicate)
//! from a conflict (same identity, other content) and from a new event. Only this module
//! knows how each database keeps them (which one a database uses is
//! `Backend::identity_keys`, `dialect.rs`):
//!
//! - PostgreSQL (issue 29, migration 0028): a 16-byte digest of (source, id) with the 16-byte
//!   content fingerprint, in one table with a global unique index on the digest. A batch's
//!   first occurrences go in by one binary `COPY` under a savepoint: the unique index answers
//!   "held before?" in the same B-tree descent as the insert, one descent per event. The
//!   identities the store itself sent lately ([`Recent`], a hint) are looked up first, so a
//!   redelivery it has seen costs one look-up, not a failed `COPY`. If the `COPY` meets a held
//!   identity after all (a unique violation: another engine's, or forgotten), the batch is
//!   rolled back to the savepoint and goes in by one statement that looks every identity up,
//!   then inserts the others (`queries/postgres/insert_identities.sql`, native arrays bound by
//!   sqlx's PostgreSQL driver); the next [`SLOW_AFTER_FALLBACK`] batches look every identity
//!   up before their `COPY` ([`Path`]).
//! - SQLite: (source, id) text as the primary key, rows passed as JSON
//!   (`queries/sqlite/*.sql`).
//!
//! Both answer the same thing: of a batch's first occurrences, which identities the table
//! held already, with their fingerprints (everything else was inserted). Which way a batch
//! went changes nothing it answers.

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::dialect::IdentityKeys;
use crate::conn::error::{Result, StoreError};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The stored identity of (source, id): the first 16 bytes of
/// SHA-256(`"{len(source)}:{source}|{id}"`), length-prefixed so no two pairs spell alike.
pub fn identity(source: &str, id: &str) -> [u8; 16] {
    // The length in decimal digits, written without allocating (this runs once per event).
    let (mut digits, mut at, mut n) = ([0u8; 20], 20, source.len());
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut h = Sha256::new();
    h.update(&digits[at..]);
    h.update(b":");
    h.update(source.as_bytes());
    h.update(b"|");
    h.update(id.as_bytes());
    let d = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// A batch's first occurrence of an identity, to insert.
pub(crate) struct NewIdentity<'a> {
    pub ident: [u8; 16],
    pub source: &'a str,
    pub id: &'a str,
    pub fingerprint: u128,
    pub account: &'a str,
    pub log_seq: i64,
    pub end_s: i64,
}

/// Most identities in one statement of the slow way (and of SQLite's).
const CHUNK: usize = 10_000;

/// Batches that look every identity up before their `COPY`, after one whose `COPY` met a held
/// identity the store had not seen.
pub const SLOW_AFTER_FALLBACK: u32 = 16;

/// Identities a store remembers having sent, as hints (see [`Recent`]).
pub const RECENT_IDENTITIES: usize = 1 << 20;

/// The identities a store sent to the table lately (their first 8 bytes), oldest first, at
/// most [`RECENT_IDENTITIES`]. Only a hint of which identities of a batch may be held: one it
/// names is looked up before the `COPY`; one it does not name but that is held anyway (sent
/// by another engine, or forgotten) makes the `COPY` fail and the batch fall back. A rolled
/// back batch leaves its identities here, which costs a look-up, never a wrong answer.
#[derive(Default)]
struct Recent {
    set: HashSet<u64>,
    order: std::collections::VecDeque<u64>,
}

impl Recent {
    fn prefix(ident: &[u8; 16]) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&ident[..8]);
        u64::from_le_bytes(b)
    }

    fn may_hold(&self, ident: &[u8; 16]) -> bool {
        self.set.contains(&Self::prefix(ident))
    }

    fn remember<'a>(&mut self, idents: impl Iterator<Item = &'a [u8; 16]>) {
        for ident in idents {
            let p = Self::prefix(ident);
            if self.set.insert(p) {
                self.order.push_back(p);
            }
        }
        while self.order.len() > RECENT_IDENTITIES {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

/// Which way a store's PostgreSQL batches send their identities, and how many went each way.
#[derive(Default)]
pub(crate) struct Path {
    /// Batches left to look every identity up before their `COPY`.
    slow_left: AtomicU32,
    recent: std::sync::Mutex<Recent>,
    copied: AtomicU64,
    fell_back: AtomicU64,
    slow: AtomicU64,
    looked_up: AtomicU64,
}

/// How many batches' identities went each way since the store was opened (PostgreSQL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IdentityPaths {
    /// Batches whose new identities went in by one `COPY`, one index descent each.
    pub copied: u64,
    /// Batches whose `COPY` met a held identity nobody had looked up, rolled back to the
    /// savepoint and went in by the look-up-then-insert statement.
    pub fell_back: u64,
    /// Batches that looked every identity up before their `COPY`, within
    /// [`SLOW_AFTER_FALLBACK`] batches of a fall-back.
    pub slow: u64,
    /// Identities looked up before a `COPY` (the store's recent ones, or all of a slow batch).
    pub looked_up: u64,
}

impl Path {
    /// Whether the next batch looks every identity up (and counts it).
    fn take_slow(&self) -> bool {
        let slow = self
            .slow_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if slow {
            self.slow.fetch_add(1, Ordering::Relaxed);
        }
        slow
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn counts(&self) -> IdentityPaths {
        IdentityPaths {
            copied: self.copied.load(Ordering::Relaxed),
            fell_back: self.fell_back.load(Ordering::Relaxed),
            slow: self.slow.load(Ordering::Relaxed),
            looked_up: self.looked_up.load(Ordering::Relaxed),
        }
    }
}

/// Inserts `rows` (first occurrences, distinct identities) and returns the identities the
/// table held before, with their stored fingerprints.
pub(crate) async fn insert(
    conn: &mut dyn Conn,
    backend: Backend,
    path: &Path,
    rows: &[NewIdentity<'_>],
) -> Result<HashMap<[u8; 16], u128>> {
    let mut held = HashMap::new();
    if rows.is_empty() {
        return Ok(held);
    }
    match backend.identity_keys() {
        IdentityKeys::Digest => insert_postgres(conn, path, rows, &mut held).await?,
        IdentityKeys::SourceAndId => {
            for chunk in rows.chunks(CHUNK) {
                insert_sqlite(conn, chunk, &mut held).await?;
            }
        }
    }
    Ok(held)
}

/// PostgreSQL: the identities this store sent lately (all of them in a slow batch) are looked
/// up; the others, and those not found, go in by one `COPY`; if the `COPY` meets a held one
/// after all, the batch falls back to the look-up-then-insert statement.
async fn insert_postgres(
    conn: &mut dyn Conn,
    path: &Path,
    rows: &[NewIdentity<'_>],
    held: &mut HashMap<[u8; 16], u128>,
) -> Result<()> {
    let slow = path.take_slow();
    let suspects: Vec<[u8; 16]> = {
        let recent = path.recent();
        rows.iter()
            .filter(|r| slow || recent.may_hold(&r.ident))
            .map(|r| r.ident)
            .collect()
    };
    for chunk in suspects.chunks(CHUNK) {
        look_up_postgres(conn, chunk, held).await?;
    }
    path.looked_up
        .fetch_add(suspects.len() as u64, Ordering::Relaxed);
    let new: Vec<&NewIdentity<'_>> = rows
        .iter()
        .filter(|r| !held.contains_key(&r.ident))
        .collect();
    if slow {
        metrics::counter!("gpubill_identity_batches_total", "path" => "slow").increment(1);
    }
    if new.is_empty() || copy_postgres(conn, new).await? {
        path.copied.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("gpubill_identity_batches_total", "path" => "copied").increment(1);
    } else {
        path.fell_back.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("gpubill_identity_batches_total", "path" => "fell_back").increment(1);
        path.slow_left.store(SLOW_AFTER_FALLBACK, Ordering::Relaxed);
        tracing::debug!(
            identities = rows.len(),
            "identities: the COPY met a held one, the batch goes the slow way"
        );
        held.clear();
        for chunk in rows.chunks(CHUNK) {
            look_up_and_insert_postgres(conn, chunk, held).await?;
        }
    }
    path.recent().remember(rows.iter().map(|r| &r.ident));
    Ok(())
}

fn fingerprint(bytes: Vec<u8>) -> Result<u128> {
    let fp: [u8; 16] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("fingerprint is not 16 bytes".into()))?;
    Ok(u128::from_le_bytes(fp))
}

/// Identity rows `(identity, fingerprint, account, log position, end)` in PostgreSQL's binary
/// `COPY` format (header, tuples, trailer), in the column order of `copy_identities.sql`.
/// Also the raw `COPY` baseline of `gpubill-bench bench-kafka`.
pub fn copy_data<'a>(rows: impl ExactSizeIterator<Item = IdentityRow<'a>>) -> Vec<u8> {
    let mut buf: Vec<u8> = Vec::with_capacity(32 + rows.len() * 100);
    buf.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    buf.extend_from_slice(&0i32.to_be_bytes()); // flags
    buf.extend_from_slice(&0i32.to_be_bytes()); // header extension
    for (ident, fingerprint, account, log_seq, end_s) in rows {
        buf.extend_from_slice(&5i16.to_be_bytes());
        for field in [&ident[..], &fingerprint[..], account.as_bytes()] {
            buf.extend_from_slice(&(field.len() as i32).to_be_bytes());
            buf.extend_from_slice(field);
        }
        for n in [log_seq, end_s] {
            buf.extend_from_slice(&8i32.to_be_bytes());
            buf.extend_from_slice(&n.to_be_bytes());
        }
    }
    buf.extend_from_slice(&(-1i16).to_be_bytes());
    buf
}

/// One identity row as [`copy_data`] takes it.
pub type IdentityRow<'a> = ([u8; 16], [u8; 16], &'a str, i64, i64);

/// The fast way: `rows` copied into `events` (binary `COPY`, in identity order) under a
/// savepoint. True when every row went in (none was held); false when one was held, with
/// the transaction rolled back to the savepoint (nothing of the `COPY` stays).
async fn copy_postgres(conn: &mut dyn Conn, mut order: Vec<&NewIdentity<'_>>) -> Result<bool> {
    let pg = crate::conn::dialect::postgres(conn)?;
    // Identity order: each leaf of the index is visited once per batch, and two folds that
    // copy the same identities take their row locks in the same order.
    order.sort_unstable_by_key(|r| r.ident);
    let buf = copy_data(order.iter().map(|r| {
        (
            r.ident,
            r.fingerprint.to_le_bytes(),
            r.account,
            r.log_seq,
            r.end_s,
        )
    }));
    Ok(crate::conn::sql::copy_raw_under_savepoint(
        pg,
        "identities",
        include_str!("../../queries/postgres/copy_identities.sql"),
        buf,
    )
    .await?)
}

/// The identities of `idents` the table holds, with their fingerprints, into `held`.
async fn look_up_postgres(
    conn: &mut dyn Conn,
    idents: &[[u8; 16]],
    held: &mut HashMap<[u8; 16], u128>,
) -> Result<()> {
    let pg = crate::conn::dialect::postgres(conn)?;
    let found = sqlx::query::<sqlx::Postgres>(include_str!(
        "../../queries/postgres/select_held_identities.sql"
    ))
    .bind(idents)
    .fetch_all(&mut *pg)
    .await?;
    read_held(found, held)
}

/// Rows of `ident` and `fingerprint` (16 bytes each) into `held`.
fn read_held(rows: Vec<sqlx::postgres::PgRow>, held: &mut HashMap<[u8; 16], u128>) -> Result<()> {
    for r in rows {
        // Fixed-width arrays on both sides: no allocation per identity.
        let ident: [u8; 16] = r
            .try_get("ident")
            .map_err(|e| StoreError::Corrupt(format!("stored identity: {e}")))?;
        let fp: [u8; 16] = r
            .try_get("fingerprint")
            .map_err(|e| StoreError::Corrupt(format!("stored fingerprint: {e}")))?;
        held.insert(ident, u128::from_le_bytes(fp));
    }
    Ok(())
}

/// The fall-back, for a batch whose `COPY` met a held identity: look up, then insert the
/// others, in one statement.
async fn look_up_and_insert_postgres(
    conn: &mut dyn Conn,
    rows: &[NewIdentity<'_>],
    held: &mut HashMap<[u8; 16], u128>,
) -> Result<()> {
    let pg = crate::conn::dialect::postgres(conn)?;
    let mut idents = Vec::with_capacity(rows.len());
    let mut fps = Vec::with_capacity(rows.len());
    let mut accounts = Vec::with_capacity(rows.len());
    let mut seqs = Vec::with_capacity(rows.len());
    let mut ends = Vec::with_capacity(rows.len());
    for r in rows {
        idents.push(r.ident);
        fps.push(r.fingerprint.to_le_bytes());
        accounts.push(r.account);
        seqs.push(r.log_seq);
        ends.push(r.end_s);
    }
    // Native arrays, bound in PostgreSQL's binary format by its own driver (one statement,
    // one round trip, prepared once per connection).
    let answered =
        sqlx::query::<sqlx::Postgres>(include_str!("../../queries/postgres/insert_identities.sql"))
            .bind(idents)
            .bind(fps)
            .bind(accounts)
            .bind(seqs)
            .bind(ends)
            .fetch_all(&mut *pg)
            .await?;
    read_held(answered, held)
}

#[derive(Serialize)]
struct JsonRow<'a> {
    s: &'a str,
    i: &'a str,
    f: String,
    a: &'a str,
    q: i64,
    e: i64,
}

#[derive(Serialize)]
struct JsonIdent<'a> {
    s: &'a str,
    i: &'a str,
}

async fn insert_sqlite(
    conn: &mut dyn Conn,
    rows: &[NewIdentity<'_>],
    held: &mut HashMap<[u8; 16], u128>,
) -> Result<()> {
    let json_rows: Vec<JsonRow<'_>> = rows
        .iter()
        .map(|r| JsonRow {
            s: r.source,
            i: r.id,
            f: hex::encode(r.fingerprint.to_le_bytes()),
            a: r.account,
            q: r.log_seq,
            e: r.end_s,
        })
        .collect();
    let json = serde_json::to_string(&json_rows).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut inserted: HashSet<(String, String)> = HashSet::new();
    for r in crate::conn::db::query(include_str!("../../queries/sqlite/insert_identities.sql"))
        .bind(json)
        .fetch_all(&mut *conn)
        .await?
    {
        inserted.insert((r.get("source"), r.get("id")));
    }
    let before: Vec<JsonIdent<'_>> = rows
        .iter()
        .filter(|r| !inserted.contains(&(r.source.to_string(), r.id.to_string())))
        .map(|r| JsonIdent {
            s: r.source,
            i: r.id,
        })
        .collect();
    if before.is_empty() {
        return Ok(());
    }
    let json = serde_json::to_string(&before).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let found =
        crate::conn::db::query(include_str!("../../queries/sqlite/stored_fingerprints.sql"))
            .bind(json)
            .fetch_all(&mut *conn)
            .await?;
    if found.len() != before.len() {
        return Err(StoreError::Corrupt(format!(
            "{} identities neither inserted nor found in the events table",
            before.len().abs_diff(found.len())
        )));
    }
    for r in found {
        let (source, id): (String, String) = (r.get("source"), r.get("id"));
        held.insert(identity(&source, &id), fingerprint(r.get("fingerprint"))?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_length_prefixed_digests() {
        assert_ne!(identity("a|1", "b"), identity("a", "1|b"));
        assert_eq!(identity("node/1", "e1"), identity("node/1", "e1"));
        // The same digest PostgreSQL's migration computes in SQL.
        let d = Sha256::digest(b"6:node/1|e1");
        assert_eq!(&identity("node/1", "e1")[..], &d[..16]);
    }
}
