//! Quota decisions: after each batch, in its transaction, the quotas of the accounts it
//! touched are measured against their thresholds (warn at `warn_at`, default 80%, limit at
//! 100%). A decision (`warn`, `limit`, or `clear` when back below the warning) is recorded only
//! when an account's level for a quota moves: it never flaps, and one crossing is one decision.
//!
//! Deterministic for replay: the period is the one of the account's latest usage second in the
//! batch (not the clock), and a decision's id is a hash of (account, quota, period, its number
//! for that quota and period), whatever the batch boundaries were.
//!
//! Measured (choices, also in the README): `spend_limit` against the period's provisional
//! invoice total (the invoices' rating function over the ledger so far); `prepaid_balance`:
//! the wallet's balance against what issued invoices still owe plus that total
//! (`billing_core::quota::against_wallet`); `gpu_hours[sku]` against the period's unit-hours
//! of the sku. `max_concurrent` is enforced at authorization only.
//!
//! Budgets per node (issue 27): the `spend_limit` of an account with sub-accounts measures its
//! whole subtree (`nodes.rs`), so a batch that moves an account's cost evaluates its
//! ancestors' quotas too (and the account's own). A decision is the node's whose limit moved:
//! `account` is the node (e.g. `corp` when its child `a`'s usage crossed corp's limit), and
//! `node` repeats it, as an authorization's denial names the node. Not the child whose usage
//! moved: one crossing of a node's limit is one decision whichever child's usage crossed it,
//! and its id (a hash of the node, quota, period and number) stays the same in a replay
//! whatever the batch boundaries were; the node's level is kept once, under its own name.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::QuotaHandle;
use crate::conn::sql::{Val, insert_rows};
use crate::pricing::books::Books;
use crate::pricing::provisional::Measure;
use crate::pricing::provisional_reads::measure;
use crate::quota::limits::Quotas;
use crate::quota::nodes::{Tree, node_spend};
use billing_core::pricebook::PriceBook;
use billing_core::quota::{self, DEFAULT_WARN_AT, Level};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

crate::conn::words::stored_words! {
    /// What a decision says, as stored in `quota_decisions.kind`: the level a quota moved to.
    pub enum DecisionKind {
        /// At or over `warn_at` of the limit.
        Warn = "warn",
        /// At or over the limit.
        Limit = "limit",
        /// Back below the warning; or (issue 28) a budget's limit or an arrears stop lifted.
        Clear = "clear",
        /// Issue 28, the arrears sequence: instances stopped, disks kept.
        Stop = "stop",
        /// Issue 28, the arrears sequence: the rental backend deletes the disks.
        Release = "release",
    }
}

/// A recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub seq: i64,
    pub id: String,
    pub account: String,
    /// The node whose limit moved: the decision's account (issue 27: a `spend_limit` of an
    /// account with sub-accounts measures its subtree, and a child's usage moves it).
    pub node: String,
    /// Section 19: the region of the billing domain whose quota moved (absent: home).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub quota: String,
    pub period: String,
    pub kind: DecisionKind,
    pub used: Decimal,
    pub limit: Decimal,
    /// The ledger position it was computed at: the batch's partitions and their next offsets.
    pub position: serde_json::Value,
    pub at_ms: i64,
}

/// Evaluates the quotas of `touched` (account → latest usage second in the batch), measured
/// with the provisional costs the batch just stored (`measured`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn evaluate(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    books: &Books,
    touched: &BTreeMap<String, i64>,
    measured: &HashMap<(String, String), Measure>,
    position: &serde_json::Value,
    quota_topic: &str,
    now_ms: i64,
) -> Result<()> {
    if touched.is_empty() {
        return Ok(());
    }
    let (touched, orgs) = with_nodes(conn, books, touched).await?;
    let trees: HashMap<&String, (&PriceBook, Tree<'_>)> = orgs
        .iter()
        .map(|(label, book)| (label, (&**book, Tree::of(book))))
        .collect();
    let quotas = quotas_of_accounts(conn, backend, &touched).await?;
    if quotas.is_empty() {
        return Ok(());
    }
    for (account, (q, _)) in &quotas {
        let Some(label) = books.label_of(touched[account]) else {
            continue;
        };
        // Issue 27: a node's `spend_limit` measures its subtree.
        let home = billing_core::domain::Domain::parse(account).account;
        let subtree_spend = match trees.get(&label) {
            Some((book, tree)) if q.spend_limit.is_some() && tree.has_children(home) => {
                let org = (*book, tree);
                Some(node_spend(conn, books, org, account, &label, Some(measured)).await?)
            }
            _ => None,
        };
        let (total, unit_seconds) = match measured.get(&(account.clone(), label.clone())) {
            Some(m) => m.clone(),
            // A closed period (late usage): measured as it stands.
            None => match measure(conn, books, account, &label).await? {
                Some(m) => m,
                None => continue,
            },
        };
        // The prepaid rule's inputs (the wallet is read only for a prepaid account).
        let (wallet, outstanding) = match q.prepaid_balance {
            Some(_) => crate::finance::wallet_rows::wallet_state(conn, account).await?,
            None => (Decimal::ZERO, Decimal::ZERO),
        };
        let (q, owed) = quota::against_wallet(q, wallet, outstanding);
        let warn_at = q.warn_at.unwrap_or(DEFAULT_WARN_AT);
        for (quota, used, limit) in quota::measures(&q, total, owed, &unit_seconds) {
            let used = match subtree_spend {
                Some(spend) if quota == "spend_limit" => spend,
                _ => used,
            };
            let level = Level::of(used, limit, warn_at);
            let at = Where {
                account,
                quota: &quota,
                label: &label,
                position,
                quota_topic,
                now_ms,
            };
            move_level(conn, &at, level, used, limit).await?;
        }
    }
    Ok(())
}

/// `touched` (domain id → latest usage second) with the nodes whose budget the batch moved
/// (issue 27, `nodes::budget_nodes`: the ancestors of each, in its region), each at the
/// latest second of its subtree's usage; and the price book (its organization) of each
/// period named.
async fn with_nodes(
    conn: &mut dyn Conn,
    books: &Books,
    touched: &BTreeMap<String, i64>,
) -> Result<(BTreeMap<String, i64>, HashMap<String, Arc<PriceBook>>)> {
    let mut orgs: HashMap<String, Arc<PriceBook>> = HashMap::new();
    let mut labels: Vec<(&String, i64, String)> = Vec::new();
    for (id, &secs) in touched {
        let Some(label) = books.label_of(secs) else {
            continue;
        };
        if !orgs.contains_key(&label) {
            match books.for_period(&mut *conn, &label).await? {
                Some((book, _)) => orgs.insert(label.clone(), book),
                None => continue,
            };
        }
        labels.push((id, secs, label));
    }
    let trees: HashMap<&String, Tree<'_>> = orgs
        .iter()
        .map(|(label, book)| (label, Tree::of(book)))
        .collect();
    let mut out = touched.clone();
    for (id, secs, label) in labels {
        let d = billing_core::domain::Domain::parse(id);
        for node in trees[&label].budget_nodes(d.account) {
            let node = billing_core::domain::Domain {
                account: node,
                region: d.region,
            }
            .id()
            .into_owned();
            let at = out.entry(node).or_insert(secs);
            *at = (*at).max(secs);
        }
    }
    drop(trees);
    Ok((out, orgs))
}

/// The quotas of the `touched` accounts that have some, each with when it was set.
async fn quotas_of_accounts(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    touched: &BTreeMap<String, i64>,
) -> Result<BTreeMap<String, (Quotas, i64)>> {
    let mut quotas: BTreeMap<String, (Quotas, i64)> = BTreeMap::new();
    let names: Vec<&str> = touched.keys().map(String::as_str).collect();
    let filter = crate::conn::sql::in_list("account", backend);
    let sql = include_str!("../../queries/shared/select_quotas_of_accounts.sql")
        .replace("{filter}", &filter);
    for r in crate::conn::db::query(&sql)
        .bind(&names[..])
        .fetch_all(&mut *conn)
        .await?
    {
        let q: Quotas = serde_json::from_str(&r.get::<String, _>("body"))
            .map_err(|e| StoreError::Corrupt(format!("stored quotas: {e}")))?;
        quotas.insert(r.get("account"), (q, r.get("updated_at_ms")));
    }
    Ok(quotas)
}

/// Moves the stored level of `at`'s quota to `level`, recording a decision per step it takes.
async fn move_level(
    conn: &mut dyn Conn,
    at: &Where<'_>,
    level: Level,
    used: Decimal,
    limit: Decimal,
) -> Result<()> {
    let row = crate::conn::db::query(include_str!("../../queries/shared/select_quota_level.sql"))
        .bind(at.account)
        .bind(at.quota)
        .bind(at.label)
        .fetch_optional(&mut *conn)
        .await?;
    let (before, n) = match row {
        None => (Level::Ok, 0),
        Some(r) => {
            let level: String = r.get("level");
            let level =
                crate::conn::error::stored(Level::parse(&level), "quota_levels", "level", &level)?;
            (level, r.get::<i64, _>("decisions"))
        }
    };
    let kinds = before.decisions_to(level);
    if kinds.is_empty() {
        return Ok(());
    }
    let (used, limit) = (used.normalize(), limit.normalize());
    let mut n = n;
    for &kind in kinds {
        n += 1;
        record(conn, at, n, kind, used, limit).await?;
    }
    crate::conn::db::query(include_str!("../../queries/shared/upsert_quota_level.sql"))
        .bind(at.account)
        .bind(at.quota)
        .bind(at.label)
        .bind(level.as_str())
        .bind(n)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Where a decision is recorded: the account's quota in a period, at a batch position.
struct Where<'a> {
    account: &'a str,
    quota: &'a str,
    label: &'a str,
    position: &'a serde_json::Value,
    quota_topic: &'a str,
    now_ms: i64,
}

/// Records the `n`th decision of (account, quota, period) and its outbox row. Its id hashes
/// those, so a replay reproduces it whatever its batch boundaries.
async fn record(
    conn: &mut dyn Conn,
    at: &Where<'_>,
    n: i64,
    kind: &str,
    used: Decimal,
    limit: Decimal,
) -> Result<()> {
    let Where {
        account,
        quota,
        label,
        position,
        quota_topic,
        now_ms,
    } = *at;
    let id = format!(
        "qd_{}",
        &crate::admin::keys::hash_key(&format!("{account}|{quota}|{label}|{n}"))[..20]
    );
    let row = DecisionRow {
        id: &id,
        account,
        quota,
        label,
        kind,
        used,
        limit,
        position,
        quota_topic,
        now_ms,
    };
    write_decision(conn, &row).await
}

/// A decision to write: its id, where it is, what it says.
pub(crate) struct DecisionRow<'a> {
    pub(crate) id: &'a str,
    pub(crate) account: &'a str,
    pub(crate) quota: &'a str,
    pub(crate) label: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) used: Decimal,
    pub(crate) limit: Decimal,
    pub(crate) position: &'a serde_json::Value,
    pub(crate) quota_topic: &'a str,
    pub(crate) now_ms: i64,
}

/// Writes a decision and its outbox row (the quota topic, keyed by the account).
pub(crate) async fn write_decision(conn: &mut dyn Conn, row: &DecisionRow<'_>) -> Result<()> {
    let DecisionRow {
        id,
        account,
        quota,
        label,
        kind,
        used,
        limit,
        position,
        quota_topic,
        now_ms,
    } = *row;
    crate::conn::db::query(include_str!(
        "../../queries/shared/insert_quota_decision.sql"
    ))
    .bind(id)
    .bind(account)
    .bind(quota)
    .bind(label)
    .bind(kind)
    .bind(used.to_string())
    .bind(limit.to_string())
    .bind(position.to_string())
    .bind(now_ms)
    .execute(&mut *conn)
    .await?;
    // Section 19: a regional domain's decision names its account and region apart, and is
    // keyed by the account (one order per account on the topic).
    let domain = billing_core::domain::Domain::parse(account);
    let mut payload = serde_json::json!({
        "id": id, "account": domain.account, "node": domain.account, "quota": quota, "period": label, "kind": kind,
        "used": used, "limit": limit, "position": position,
        "at": billing_core::timestamp::format_secs(now_ms.div_euclid(1000)),
    });
    if let Some(region) = domain.region {
        payload["region"] = serde_json::Value::from(region);
    }
    insert_rows(
        conn,
        include_str!("../../queries/shared/insert_outbox.sql"),
        "",
        vec![vec![
            Val::Text(quota_topic.to_string()),
            Val::Text(domain.account.to_string()),
            Val::Text(payload.to_string()),
            Val::I64(now_ms),
        ]],
    )
    .await?;
    metrics::counter!("gpubill_quota_decisions_total", "kind" => kind.to_string()).increment(1);
    Ok(())
}

impl QuotaHandle<'_> {
    /// Decisions, oldest first: an account's (when given), filtered by quota and kind, after
    /// `after_seq`.
    pub async fn quota_decisions(
        &self,
        account: Option<&str>,
        quota: Option<&str>,
        kind: Option<&str>,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<Decision>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_quota_decisions.sql"
        ))
        .bind(account.unwrap_or(""))
        .bind(quota.unwrap_or(""))
        .bind(kind.unwrap_or(""))
        .bind(after_seq)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let dec = |column: &str| {
                    let s: String = r.get(column);
                    crate::conn::error::stored(
                        s.parse::<Decimal>().ok(),
                        "quota_decisions",
                        column,
                        &s,
                    )
                };
                let kind: String = r.get("kind");
                let position: String = r.get("position");
                let domain: String = r.get("account");
                let domain = billing_core::domain::Domain::parse(&domain);
                Ok(Decision {
                    seq: r.get("seq"),
                    id: r.get("id"),
                    account: domain.account.to_string(),
                    node: domain.account.to_string(),
                    region: domain.region.map(str::to_string),
                    quota: r.get("quota"),
                    period: r.get("period"),
                    kind: crate::conn::error::stored(
                        DecisionKind::parse(&kind),
                        "quota_decisions",
                        "kind",
                        &kind,
                    )?,
                    used: dec("used")?,
                    limit: dec("quota_limit")?,
                    position: crate::conn::error::stored(
                        serde_json::from_str(&position).ok(),
                        "quota_decisions",
                        "position",
                        &position,
                    )?,
                    at_ms: r.get("at_ms"),
                })
            })
            .collect()
    }
}
