//! What counts against an account's quotas at an authorization, read once per group: its
//! quotas, the open period's provisional cost, its wallet and what its invoices still owe,
//! the units running now and its live holds (from the process's cache while its hold revision holds).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::pricing::books::Books;
use crate::pricing::provisional_reads::{parse_measure, rate_measure};
use crate::quota::limits::{Hold, Quotas, live_holds};
use billing_core::quota::Spent;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};

/// Counts a live hold as spent: what it counts for is the core's (`Spent::add_hold`).
pub(crate) fn add_hold(spent: &mut Spent, h: &Hold) {
    spent.add_hold(&h.sku, h.quantity, h.seconds, h.amount);
}

/// Units of each sku running at `now_s`: usage keys whose last run ends within
/// `RUNNING_WINDOW_S` ([`billing_core::quota::is_running`]), each with its last run's
/// quantity.
pub(crate) async fn running_units(
    conn: &mut dyn Conn,
    account: &str,
    now_s: i64,
) -> Result<BTreeMap<String, Decimal>> {
    let since = billing_core::quota::running_since(now_s);
    let rows = crate::conn::db::query(include_str!("../../queries/shared/select_running_keys.sql"))
        .bind(account)
        .bind(since)
        .fetch_all(conn)
        .await?;
    let mut out: BTreeMap<String, Decimal> = BTreeMap::new();
    for r in rows {
        let runs: billing_core::ledger::Runs = serde_json::from_str(&r.get::<String, _>("runs"))
            .map_err(|e| StoreError::Corrupt(format!("ledger runs: {e}")))?;
        if let Some(last) = runs
            .as_slice()
            .last()
            .filter(|l| billing_core::quota::is_running(l.to, now_s))
        {
            *out.entry(r.get("sku")).or_default() += last.quantity;
        }
    }
    Ok(out)
}

/// What the checks of a billing domain need (`account`: the domain's id, the account at home
/// or `account@region`: its quotas, cost, wallet and holds are the domain's), read once per
/// group (None: no such account); see the module docs for the order of the reads.
pub(crate) async fn account_state(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    cache: &std::sync::Mutex<HashMap<String, (i64, Vec<Hold>)>>,
    books: &Books,
    account: &str,
    label: &str,
    now_ms: i64,
) -> Result<Option<AccountState>> {
    // The account, the domain's quotas, its stored provisional cost, its hold revision (and
    // on its wallet's balance and outstanding) in one statement.
    let sql = backend.sql(crate::conn::dialect::Statement::SelectAccountState);
    let home = billing_core::domain::Domain::parse(account).account;
    let read = async |conn: &mut dyn Conn| {
        crate::conn::db::query(sql)
            .bind(home)
            .bind(label)
            .bind(account)
            .fetch_optional(conn)
            .await
    };
    let Some(mut row) = read(conn).await? else {
        return Ok(None);
    };
    let rev = row.get::<Option<i64>, _>("rev").unwrap_or(0);
    // The live holds: from the process's cache when the revision has not moved since it was
    // filled (then they are the ones of the statement's snapshot), else read now, after the
    // revision (at least as new as it), and the statement read again so that the provisional
    // cost is at least as new as the holds (a fold capturing a hold in between can then only
    // make its usage count twice, never not at all).
    let cached = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(account)
        .filter(|(r, _)| *r == rev)
        .map(|(_, h)| {
            h.iter()
                .filter(|h| h.expires_at_ms > now_ms)
                .cloned()
                .collect()
        });
    let holds: Vec<Hold> = match cached {
        Some(holds) => holds,
        None => {
            let holds = live_holds(conn, account, now_ms).await?;
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(account.to_string(), (rev, holds.clone()));
            let Some(again) = read(conn).await? else {
                return Ok(None);
            };
            row = again;
            holds
        }
    };
    let (quotas, mut spent) = spent_of(conn, books, account, label, &row, now_ms).await?;
    for h in &holds {
        add_hold(&mut spent, h);
    }
    Ok(Some(AccountState {
        quotas,
        rev,
        holds,
        spent,
    }))
}

/// An account's quotas and what counts against them but its live holds, from the account
/// statement's `row` (quotas, stored provisional cost, the wallet's balance and outstanding),
/// reading or rating what the row does not hold.
async fn spent_of(
    conn: &mut dyn Conn,
    books: &Books,
    account: &str,
    label: &str,
    row: &crate::conn::db::DbRow,
    now_ms: i64,
) -> Result<(Quotas, Spent)> {
    let (quotas, _set_at) = match row.get::<Option<String>, _>("body") {
        Some(body) => (
            serde_json::from_str::<Quotas>(&body)
                .map_err(|e| StoreError::Corrupt(format!("stored quotas: {e}")))?,
            row.get::<Option<i64>, _>("updated_at_ms")
                .unwrap_or_default(),
        ),
        None => Default::default(),
    };
    let needs_rating = quotas.spend_limit.is_some()
        || quotas.prepaid_balance.is_some()
        || !quotas.gpu_hours.is_empty();
    let running = if quotas.max_concurrent.is_empty() {
        BTreeMap::new()
    } else {
        running_units(conn, account, now_ms.div_euclid(1000)).await?
    };
    let stored = match (
        row.get::<Option<String>, _>("total"),
        row.get::<Option<String>, _>("unit_seconds"),
    ) {
        (Some(total), Some(units)) => Some(parse_measure(&total, &units)?),
        _ => None,
    };
    let (period_cost, sku_seconds) = match stored {
        _ if !needs_rating => Default::default(),
        Some(m) => m,
        // No batch touched the period yet: the same rating, now.
        None => rate_measure(conn, books, account, label)
            .await?
            .unwrap_or_default(),
    };
    // The prepaid rule's inputs: the core's `against_wallet` (the wallet is parsed only for a
    // prepaid account).
    let (wallet, outstanding) = match quotas.prepaid_balance {
        None => (Decimal::ZERO, Decimal::ZERO),
        Some(_) => {
            let text = |column: &str| -> Result<Decimal> {
                row.get::<Option<String>, _>(column)
                    .map_or(Ok(Decimal::ZERO), |v| {
                        crate::conn::error::stored(v.parse::<Decimal>().ok(), "wallets", column, &v)
                    })
            };
            (text("balance")?, text("outstanding")?)
        }
    };
    let (quotas, owed) = billing_core::quota::against_wallet(&quotas, wallet, outstanding);
    let spent = Spent {
        period_cost,
        owed,
        running,
        sku_seconds,
        ..Spent::default()
    };
    Ok((quotas, spent))
}

/// An account's quotas and what counts against them, within one group.
pub(crate) struct AccountState {
    pub(crate) quotas: Quotas,
    /// The hold revision read, and the live holds (with the ones this group placed so far).
    pub(crate) rev: i64,
    pub(crate) holds: Vec<Hold>,
    /// What counts against the quotas, live holds (and this group's new ones) included.
    pub(crate) spent: Spent,
}
