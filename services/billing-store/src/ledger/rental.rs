//! The rental events of billing-semantics part 2 in the store (migration 0012): one row per
//! distinct fact (a lease's state point, a counter sample, a spot price point, a node fault),
//! written by the fold and read back into the accounts' ledgers and the platform that rating
//! reads. Facts are sets: a row arrives once however often its event is redelivered, and
//! two events saying the same thing (at the same second) are one fact, as in the core's
//! meter.

use crate::conn::error::{Result, StoreError};
use crate::conn::sql::Val;
use billing_core::lease::LeaseState;
use billing_core::ledger::{AccountLedger, CounterKey};
use billing_core::platform::Platform;
use billing_core::rental::RentalData;
use rust_decimal::Decimal;
use std::collections::HashMap;

/// The `rental_events` row of an accepted rental event of `subject` (kind, account, key, a,
/// b, value); platform events are stored under the account `''`.
pub(crate) fn row(subject: &str, r: &RentalData<'_>) -> Vec<Val> {
    let (account, key, a, b, value) = match r {
        RentalData::LeaseState(x) => (
            subject,
            x.lease.to_string(),
            x.at.floor_secs(),
            0,
            x.state.as_str().to_string(),
        ),
        RentalData::NetCounter(x) => (
            subject,
            serde_json::json!([x.lease, x.interface, x.dest]).to_string(),
            x.at.floor_secs(),
            0,
            x.bytes_total.to_string(),
        ),
        RentalData::SpotPrice(x) => (
            "",
            x.sku.to_string(),
            x.from.floor_secs(),
            0,
            x.price_per_hour.normalize().to_string(),
        ),
        RentalData::NodeFault(x) => (
            "",
            x.node.to_string(),
            x.start.floor_secs(),
            x.end.ceil_secs(),
            String::new(),
        ),
    };
    vec![
        Val::Text(r.data_type().to_string()),
        Val::Text(account.to_string()),
        Val::Text(key),
        Val::I64(a),
        Val::I64(b),
        Val::Text(value),
    ]
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("rental_events {what}: {e}"))
}

/// Adds the lease states and counter samples of `accounts` to their ledgers (whole: a state
/// or a counter's baseline may lie before any period rated).
pub(crate) async fn load_account_facts(
    conn: &mut dyn crate::conn::db::Conn,
    filter: &str,
    param: &crate::conn::db::Val,
    ledgers: &mut HashMap<String, AccountLedger>,
) -> Result<()> {
    let rows = crate::conn::db::query(
        &include_str!("../../queries/shared/select_account_rental_facts.sql")
            .replace("{filter}", filter),
    )
    .bind(param.clone())
    .fetch_all(&mut *conn)
    .await?;
    for r in rows {
        let (kind, account, key): (String, String, String) =
            (r.get("kind"), r.get("account"), r.get("key"));
        let (a, value): (i64, String) = (r.get("a"), r.get("value"));
        let ledger = ledgers.entry(account).or_default();
        match kind.as_str() {
            "lease.state" => {
                let state = LeaseState::parse(&value).ok_or_else(|| corrupt("state", &value))?;
                ledger.add_lease_state(&key, a, state);
            }
            "net.counter" => {
                let [lease, interface, dest]: [String; 3] =
                    serde_json::from_str(&key).map_err(|e| corrupt("counter key", e))?;
                let bytes: u64 = value.parse().map_err(|e| corrupt("bytes_total", e))?;
                ledger.add_counter_sample(
                    CounterKey {
                        lease,
                        interface,
                        dest,
                    },
                    a,
                    bytes,
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every spot price point and node fault: what every account's rating reads.
pub(crate) async fn load_platform(conn: &mut dyn crate::conn::db::Conn) -> Result<Platform> {
    let rows = crate::conn::db::query(include_str!(
        "../../queries/shared/select_platform_facts.sql"
    ))
    .fetch_all(&mut *conn)
    .await?;
    platform_of(rows)
}

/// [`load_platform`] as the platform events ingested at or before `t_ms` made it (issue 12,
/// as-known-at and `gpubill verify`).
pub(crate) async fn load_platform_known_at(
    conn: &mut dyn crate::conn::db::Conn,
    known: crate::events::known::Known,
) -> Result<Platform> {
    let (t_ms, stamp) = known.bounds();
    let rows = crate::conn::db::query(include_str!(
        "../../queries/shared/select_platform_facts_known_at.sql"
    ))
    .bind(t_ms)
    .bind(stamp)
    .fetch_all(&mut *conn)
    .await?;
    platform_of(rows)
}

fn platform_of(rows: Vec<crate::conn::db::DbRow>) -> Result<Platform> {
    let mut platform = Platform::new();
    for r in rows {
        let (kind, key): (String, String) = (r.get("kind"), r.get("key"));
        let (a, b, value): (i64, i64, String) = (r.get("a"), r.get("b"), r.get("value"));
        match kind.as_str() {
            "spot.price" => {
                let price: Decimal = value.parse().map_err(|e| corrupt("price", e))?;
                platform.add_spot_price(&key, a, price);
            }
            "node.fault" if a < b => platform.add_fault(&key, a, b),
            _ => {}
        }
    }
    Ok(platform)
}
