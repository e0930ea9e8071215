//! The raw `COPY` baseline of `bench-kafka` (issue 11): the same identity rows the engine
//! stores for the benchmark's events (16-byte identity digest, 16-byte fingerprint, account,
//! offset, end), copied with PostgreSQL's binary `COPY` into a table shaped like `events`
//! (same columns, same primary key, same index on the end) in the same database. It is the
//! fastest way PostgreSQL can take those rows, so `engine / copy` says how close the fold's
//! writes come to PostgreSQL's own limit.

use billing_core::event::decode;
use sqlx::Connection;
use std::time::{Duration, Instant};

/// One identity row, as the engine stores it.
pub struct IdentityRow {
    pub ident: [u8; 16],
    pub fingerprint: [u8; 16],
    pub account: String,
    pub log_seq: i64,
    pub end_s: i64,
}

/// The identity rows of `events` (records keyed by account), in production order; offsets
/// are positions. Undecodable records are skipped (the fleet has none).
pub fn identity_rows(events: &[(String, Vec<u8>)]) -> Vec<IdentityRow> {
    events
        .iter()
        .enumerate()
        .filter_map(|(n, (_, record))| {
            let e = decode(record).ok()?;
            Some(IdentityRow {
                ident: billing_store::identity(&e.source, &e.id),
                fingerprint: e.fingerprint().to_le_bytes(),
                account: e.subject.to_string(),
                log_seq: n as i64,
                end_s: e.end_secs(),
            })
        })
        .collect()
}

/// Binary `COPY` encoding of `rows`, as the engine sends its identities.
fn encode(rows: &[IdentityRow]) -> Vec<u8> {
    billing_store::copy_data(rows.iter().map(|r| {
        (
            r.ident,
            r.fingerprint,
            r.account.as_str(),
            r.log_seq,
            r.end_s,
        )
    }))
}

/// Copies `rows` into a new table `like events` (columns, primary key and the index on the
/// end, migration 0028) of the database at `url`, in one transaction; answers the time of
/// the copy and its commit.
pub async fn copy_rows(url: &str, rows: &[IdentityRow]) -> anyhow::Result<Duration> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    sqlx::query("drop table if exists copy_baseline")
        .execute(&mut conn)
        .await?;
    // The same shape as `events`: its columns, key and indexes.
    sqlx::query("create table copy_baseline (like events including all)")
        .execute(&mut conn)
        .await?;
    let data = encode(rows);
    let t = Instant::now();
    let mut tx = conn.begin().await?;
    let mut copy = tx
        .copy_in_raw("copy copy_baseline (ident, fingerprint, account, log_seq, end_s) from stdin (format binary)")
        .await?;
    for chunk in data.chunks(1 << 20) {
        copy.send(chunk).await?;
    }
    let copied = copy.finish().await?;
    tx.commit().await?;
    let took = t.elapsed();
    anyhow::ensure!(
        copied as usize == rows.len(),
        "copied {copied} of {} rows",
        rows.len()
    );
    sqlx::query("drop table copy_baseline")
        .execute(&mut conn)
        .await?;
    Ok(took)
}
