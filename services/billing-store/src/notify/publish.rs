//! Writing a notice: once under its dedupe key, with the account's next sequence number, in
//! the transaction of what caused it; fanned out to the webhook deliveries of the endpoints
//! that take it, put on the notifications topic, and, when it makes a quota decision due,
//! that decision on the quota topic.

use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::sql::{Val, insert_rows};
use crate::conn::store::Topics;
use billing_core::notify::Notice;
use rust_decimal::Decimal;

/// Where and when notices are written: the topics, the batch position (decisions carry it),
/// and the time rows are stamped with.
pub(crate) struct Outlet<'a> {
    pub(crate) backend: crate::conn::backend::Backend,
    pub(crate) topics: &'a Topics,
    pub(crate) position: &'a serde_json::Value,
    pub(crate) now_ms: i64,
}

/// The quota decision a notice makes due, measured: the period (or `arrears`) it is in and
/// the used and limit amounts it shows.
pub(crate) struct Measured<'a> {
    pub(crate) label: &'a str,
    pub(crate) used: Decimal,
    pub(crate) limit: Decimal,
}

/// A notice as written: its outbox id and the account's sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub id: i64,
    pub seq: i64,
}

/// Writes `notice` unless its account has its key already (then `None`: a replay, a
/// redelivered batch or a second engine found the fact written).
pub(crate) async fn publish(
    conn: &mut dyn Conn,
    out: &Outlet<'_>,
    notice: &Notice,
    measured: &Measured<'_>,
) -> Result<Option<Published>> {
    // Two transactions publishing for one account (folds of two partitions moving a node's
    // budget, a fold and a tick) take its sequence numbers in turn: PostgreSQL's
    // transaction-scoped lock on the account; SQLite has one writer already.
    out.backend
        .advisory_locks(conn, None, &[seq_lock(&notice.account)])
        .await?;
    let seq: i64 = crate::conn::db::query(include_str!(
        "../../queries/shared/select_next_notification_seq.sql"
    ))
    .bind(notice.account.as_str())
    .fetch_one(&mut *conn)
    .await?
    .get("seq");
    let mut notice = notice.clone();
    notice.seq = Some(seq);
    let body = notice.envelope().to_string();
    let row = crate::conn::db::query(include_str!("../../queries/shared/insert_notification.sql"))
        .bind(notice.account.as_str())
        .bind(seq)
        .bind(notice.kind.as_str())
        .bind(notice.key.as_str())
        .bind(notice.at)
        .bind(body.as_str())
        .bind(out.now_ms)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let id: i64 = row.get("id");
    crate::conn::db::query(include_str!(
        "../../queries/shared/insert_deliveries_for_notification.sql"
    ))
    .bind(id)
    .bind(out.now_ms)
    .bind(notice.account.as_str())
    .bind(notice.kind.as_str())
    .execute(&mut *conn)
    .await?;
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_outbox.sql"),
        "",
        vec![vec![
            Val::Text(out.topics.notifications.clone()),
            Val::Text(notice.account.clone()),
            Val::Text(body),
            Val::I64(out.now_ms),
        ]],
    )
    .await?;
    if let Some(due) = &notice.decision {
        let id = format!(
            "qd_{}",
            &crate::admin::keys::hash_key(&format!("notice|{}|{}", notice.account, notice.key))
                [..20]
        );
        let row = crate::quota::decisions::DecisionRow {
            id: &id,
            account: &notice.account,
            quota: &due.quota,
            label: measured.label,
            kind: due.kind.as_str(),
            used: measured.used.normalize(),
            limit: measured.limit.normalize(),
            position: out.position,
            quota_topic: &out.topics.quota,
            now_ms: out.now_ms,
        };
        crate::quota::decisions::write_decision(conn, &row).await?;
    }
    metrics::counter!("gpubill_notifications_total", "type" => notice.kind.as_str()).increment(1);
    Ok(Some(Published { id, seq }))
}

/// The advisory lock key of an account's notification sequence: a hash of the account with a
/// high tag, apart from the small keys of the writer locks.
fn seq_lock(account: &str) -> i64 {
    let h = crate::admin::keys::hash_key(&format!("notify-seq|{account}"));
    let v = u64::from_str_radix(&h[..15], 16).unwrap_or(0);
    i64::from_ne_bytes(v.to_ne_bytes()) | (1 << 60)
}
