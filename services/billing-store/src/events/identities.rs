//! Event identities: what tells a redelivery (same source and id, same content: a duplicate)
//! from a conflict (same identity, other content) and from a new event. Only this module
//! knows how each database keeps them (which one a database uses is
//! `Backend::identity_keys`, `dialect.rs`):
//!
//! - PostgreSQL: a 16-byte digest of (source, id) with the 16-byte content fingerprint, in a
//!   table partitioned by the month of the event's end (key (digest, end)), looked up and
//!   inserted in one statement per batch from native arrays bound by sqlx's PostgreSQL
//!   driver (`bytea[]`, `text[]`, `int8[]`; no JSON, no text keys;
//!   `queries/postgres/insert_identities.sql`).
//! - SQLite: (source, id) text as the primary key, rows passed as JSON
//!   (`queries/sqlite/*.sql`).
//!
//! Both answer the same thing: of a batch's first occurrences, which identities the table
//! held already, with their fingerprints (everything else was inserted).

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::dialect::IdentityKeys;
use crate::conn::error::{Result, StoreError};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};

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

/// Most identities in one statement.
const CHUNK: usize = 10_000;

/// Inserts `rows` (first occurrences, distinct identities) and returns the identities the
/// table held before, with their stored fingerprints.
pub(crate) async fn insert(
    conn: &mut dyn Conn,
    backend: Backend,
    rows: &[NewIdentity<'_>],
) -> Result<HashMap<[u8; 16], u128>> {
    let mut held = HashMap::new();
    for chunk in rows.chunks(CHUNK) {
        match backend.identity_keys() {
            IdentityKeys::Digest => insert_postgres(conn, chunk, &mut held).await?,
            IdentityKeys::SourceAndId => insert_sqlite(conn, chunk, &mut held).await?,
        }
    }
    Ok(held)
}

fn fingerprint(bytes: Vec<u8>) -> Result<u128> {
    let fp: [u8; 16] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("fingerprint is not 16 bytes".into()))?;
    Ok(u128::from_le_bytes(fp))
}

async fn insert_postgres(
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
    for r in answered {
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
