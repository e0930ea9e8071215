//! Holds captured by the usage a batch folds, and expired holds marked, in the batch's
//! transaction.

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::dialect::Statement;
use crate::conn::error::{Result, StoreError};
use serde::Serialize;
use std::collections::BTreeSet;

/// Usage arriving for a lease consumes the lease's live holds (two-phase: a pending hold is
/// posted by the usage it stood for; the usage itself now counts, through the ledger). Holds
/// past their expiry are marked first (every read treats them as expired already; marking
/// keeps the live ones few), only the batch's own accounts': folds of other partitions run
/// concurrently and must not contend for each other's rows.
pub(crate) async fn capture_holds(
    conn: &mut dyn Conn,
    backend: Backend,
    accounts_and_leases: impl Iterator<Item = (&str, &str)>,
    now_ms: i64,
) -> Result<()> {
    let mut leases: Vec<LeaseRef<'_>> = accounts_and_leases
        .map(|(a, l)| LeaseRef { a, l })
        .collect();
    if leases.is_empty() {
        return Ok(());
    }
    let accounts: BTreeSet<&str> = leases.iter().map(|l| l.a).collect();
    let json = serde_json::to_string(&accounts).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    crate::conn::db::query(backend.sql(Statement::ExpireHolds))
        .bind(now_ms)
        .bind(json)
        .execute(&mut *conn)
        .await?;
    leases.sort_unstable_by(|x, y| (x.a, x.l).cmp(&(y.a, y.l)));
    leases.dedup_by(|x, y| (x.a, x.l) == (y.a, y.l));
    let json = serde_json::to_string(&leases).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let captured: BTreeSet<String> = crate::conn::db::query(backend.sql(Statement::CaptureHolds))
        .bind(now_ms)
        .bind(json)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| r.get("account"))
        .collect();
    // Their accounts' cached holds (authorization) are no longer the stored ones. In account
    // order, as authorization groups bump them: two transactions never wait on each other in
    // a circle.
    for account in &captured {
        crate::quota::limits::bump_hold_rev(conn, account).await?;
    }
    Ok(())
}

#[derive(Serialize)]
struct LeaseRef<'a> {
    a: &'a str,
    l: &'a str,
}
