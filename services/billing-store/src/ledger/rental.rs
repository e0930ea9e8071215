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
            &*billing_core::domain::Domain {
                account: subject,
                region: x.region.as_deref(),
            }
            .id(),
            serde_json::json!([x.lease, x.interface, x.dest]).to_string(),
            x.at.floor_secs(),
            0,
            x.bytes_total.to_string(),
        ),
        RentalData::SpotPrice(x) => (
            "",
            // A region's curve is kept under `["sku","region"]` (section 19), home's under
            // the sku.
            match x.region.as_deref() {
                None => x.sku.to_string(),
                Some(r) => serde_json::json!([x.sku, r]).to_string(),
            },
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
        // Section 18: the lease's tags from `at` on, as a JSON array of [name, value] pairs
        // in name order (one fact per distinct set of tags at a second).
        RentalData::LeaseTags(x) => (
            subject,
            x.lease.to_string(),
            x.at.floor_secs(),
            0,
            serde_json::to_string(&x.tags).unwrap_or_default(),
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

crate::conn::words::stored_words! {
    /// What a `rental_events` row is (its `kind`): the event type it came from.
    pub enum RentalKind {
        LeaseState = "lease.state",
        NetCounter = "net.counter",
        SpotPrice = "spot.price",
        NodeFault = "node.fault",
        LeaseTags = "lease.tags",
    }
}

/// The kind of a `rental_events` row: one the code knows, and an account's fact (`account`)
/// or the platform's, as the row is stored.
fn kind_of(r: &crate::conn::db::DbRow, account: bool) -> Result<RentalKind> {
    let raw: String = r.get("kind");
    let kind = crate::conn::error::stored(RentalKind::parse(&raw), "rental_events", "kind", &raw)?;
    let of_account = matches!(
        kind,
        RentalKind::LeaseState | RentalKind::NetCounter | RentalKind::LeaseTags
    );
    if of_account != account {
        return Err(StoreError::Corrupt(format!(
            "rental_events.kind holds {raw:?} in a row of {}",
            if account {
                "an account"
            } else {
                "the platform"
            }
        )));
    }
    Ok(kind)
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
        let kind = kind_of(&r, true)?;
        let (account, key): (String, String) = (r.get("account"), r.get("key"));
        let (a, value): (i64, String) = (r.get("a"), r.get("value"));
        let ledger = ledgers.entry(account).or_default();
        match kind {
            RentalKind::LeaseState => {
                let state = crate::conn::error::stored(
                    LeaseState::parse(&value),
                    "rental_events",
                    "value",
                    &value,
                )?;
                ledger.add_lease_state(&key, a, state);
            }
            RentalKind::NetCounter => {
                let [lease, interface, dest]: [String; 3] =
                    serde_json::from_str(&key).map_err(|e| corrupt("counter key", e))?;
                let bytes: u64 = crate::conn::error::stored(
                    value.parse().ok(),
                    "rental_events",
                    "value",
                    &value,
                )?;
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
            RentalKind::LeaseTags => {
                let tags: billing_core::rental::tags::Tags =
                    serde_json::from_str(&value).map_err(|e| corrupt("lease tags", e))?;
                ledger.add_lease_tags(&key, a, tags);
            }
            // `kind_of` let only an account's facts through.
            RentalKind::SpotPrice | RentalKind::NodeFault => {}
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
        let kind = kind_of(&r, false)?;
        let key: String = r.get("key");
        let (a, b, value): (i64, i64, String) = (r.get("a"), r.get("b"), r.get("value"));
        match kind {
            RentalKind::SpotPrice => {
                let price: Decimal = crate::conn::error::stored(
                    value.parse().ok(),
                    "rental_events",
                    "value",
                    &value,
                )?;
                match serde_json::from_str::<[String; 2]>(&key) {
                    Ok([sku, region]) => platform.add_spot_price_in(Some(&region), &sku, a, price),
                    Err(_) => platform.add_spot_price(&key, a, price),
                }
            }
            RentalKind::NodeFault => {
                if a < b {
                    platform.add_fault(&key, a, b)
                }
            }
            // `kind_of` let only the platform's facts through.
            RentalKind::LeaseState | RentalKind::NetCounter | RentalKind::LeaseTags => {}
        }
    }
    Ok(platform)
}

/// Section 19: lease states apply to their lease's keys in every region, so the home
/// account's states join the ledgers of its regional domains (`account@region`) in
/// `ledgers`, as the core's `Meter::account_in` joins them; `known` narrows the facts read
/// (a condition appended to the account's filter; empty: all).
pub(crate) async fn add_home_lease_states(
    conn: &mut dyn crate::conn::db::Conn,
    known: &str,
    ledgers: &mut HashMap<String, AccountLedger>,
) -> Result<()> {
    let mut regional: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for id in ledgers.keys() {
        let domain = billing_core::domain::Domain::parse(id);
        if domain.region.is_some() {
            regional
                .entry(domain.account.to_string())
                .or_default()
                .push(id.clone());
        }
    }
    for (account, ids) in regional {
        let mut home = HashMap::new();
        let param = crate::conn::db::Val::Text(account.clone());
        let filter = format!("{}{known}", crate::conn::sql::ONE_ACCOUNT);
        load_account_facts(conn, &filter, &param, &mut home).await?;
        let Some(home) = home.get(&account) else {
            continue;
        };
        for id in ids {
            if let Some(ledger) = ledgers.get_mut(&id) {
                ledger.merge_leases(home);
            }
        }
    }
    Ok(())
}
