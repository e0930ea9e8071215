//! Quotas as policy, without I/O: what counts as spent, the levels and decisions of
//! `warn`/`limit`/`clear`, and authorizations with the size of their holds. The store loads
//! the figures (provisional cost, the wallet and what invoices still owe, live holds, running
//! units), calls these functions, and saves what they decide.
//!
//! What is spent (choices where issue 5 left room, also in the README):
//! - `spend_limit`: the open period's provisional invoice total (rated from the ledger with
//!   the invoices' own function) plus live holds plus the new hold, at most the limit;
//! - `prepaid_balance`: turns the prepaid rule on; the limit is then the account's wallet
//!   balance, burned by what its issued invoices still owe and by the open period's
//!   provisional total; live holds and the new hold must fit in the rest ([`against_wallet`],
//!   [`prepaid_used`]);
//! - `max_concurrent[sku]`: units of live holds of the sku plus the units running now plus the
//!   new hold's (authorization only);
//! - `gpu_hours[sku]`: the open period's unit-hours of the sku plus live holds' unit-hours plus
//!   the new hold's.

use crate::common::decimal::serde_strict as strict;
use crate::pricing::invoice::{Component, Line};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod holds;

pub use holds::{
    DEFAULT_HOLD_TTL_S, MAX_HOLD_QUANTITY, MAX_HOLD_SECONDS, MAX_HOLD_TTL_S, TtlOutOfRange,
    check_hold_size, hold_amount, hold_rate, hold_ttl_ms,
};

/// An account's quotas (every field optional), as `PUT /v1/admin/accounts/{id}/quotas` takes
/// them: decimals as strings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quotas {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "strict::option"
    )]
    pub prepaid_balance: Option<Decimal>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "strict::option"
    )]
    pub spend_limit: Option<Decimal>,
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "strict::map"
    )]
    pub gpu_hours: BTreeMap<String, Decimal>,
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "strict::map"
    )]
    pub max_concurrent: BTreeMap<String, Decimal>,
    /// Warn at this fraction of a limit (default 0.8).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "strict::option"
    )]
    pub warn_at: Option<Decimal>,
}

/// Largest amount or quantity gpubill takes in a quota or a hold.
const ABSURD: i64 = 1_000_000_000_000;

impl Quotas {
    /// Checks every value; the error names the field and the value.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let check = |name: String, v: &Decimal, zero_ok: bool| {
            if v.is_sign_negative() || (!zero_ok && v.is_zero()) || *v > Decimal::from(ABSURD) {
                Err(format!(
                    "{name} = {v}: must be {} and at most {ABSURD}",
                    if zero_ok { "at least 0" } else { "positive" }
                ))
            } else {
                Ok(())
            }
        };
        let money = |name: &str, v: &Decimal| {
            crate::common::decimal::check_money(*v).map_err(|e| format!("{name} = {v}: {e}"))
        };
        if let Some(v) = &self.prepaid_balance {
            check("prepaid_balance".into(), v, true)?;
            money("prepaid_balance", v)?;
        }
        if let Some(v) = &self.spend_limit {
            check("spend_limit".into(), v, false)?;
            money("spend_limit", v)?;
        }
        for (sku, v) in &self.gpu_hours {
            check(format!("gpu_hours.{sku}"), v, false)?;
        }
        for (sku, v) in &self.max_concurrent {
            check(format!("max_concurrent.{sku}"), v, false)?;
        }
        if let Some(w) = &self.warn_at
            && (*w <= Decimal::ZERO || *w > Decimal::ONE)
        {
            return Err(format!("warn_at = {w}: must be above 0 and at most 1"));
        }
        Ok(())
    }
}

/// Where a quota stands against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ok,
    Warn,
    Limit,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Limit => "limit",
        }
    }

    /// A stored level (`ok`, `warn`, `limit`); anything else is `None`, never a default: the
    /// caller names where the unknown value was found.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "ok" => Some(Level::Ok),
            "warn" => Some(Level::Warn),
            "limit" => Some(Level::Limit),
            _ => None,
        }
    }

    /// `limit` at or over the limit, `warn` at or over `warn_at` of it, else `ok`.
    pub fn of(used: Decimal, limit: Decimal, warn_at: Decimal) -> Level {
        if used >= limit {
            Level::Limit
        } else if used >= limit * warn_at {
            Level::Warn
        } else {
            Level::Ok
        }
    }

    /// The decisions recorded when a quota moves from `self` to `to`: none when it stays;
    /// every threshold crossed is a decision of its own (`warn` then `limit` when one batch
    /// crosses both), so the sequence does not depend on where batches end; `clear` when it
    /// falls back below the warning.
    pub fn decisions_to(self, to: Level) -> &'static [&'static str] {
        match (self, to) {
            (a, b) if a == b => &[],
            (Level::Ok, Level::Limit) => &["warn", "limit"],
            (_, Level::Ok) => &["clear"],
            (_, Level::Warn) => &["warn"],
            (_, Level::Limit) => &["limit"],
        }
    }
}

/// The default `warn_at`: 80% of a limit.
pub const DEFAULT_WARN_AT: Decimal = Decimal::from_parts(8, 0, 0, false, 1);

/// What a batch measures of an account's quotas in a period, as (quota, used, limit):
/// `spend_limit` against the period's provisional total, `prepaid_balance` against what
/// issued invoices still owe (`owed`) plus that total, `gpu_hours.SKU` against the period's
/// unit-hours of the sku (`unit_seconds` per sku). `max_concurrent` is not measured here: it
/// is enforced at authorization only. `q` and `owed` are the prepaid rule's inputs
/// ([`against_wallet`]).
pub fn measures(
    q: &Quotas,
    period_total: Decimal,
    owed: Decimal,
    unit_seconds: &BTreeMap<String, Decimal>,
) -> Vec<(String, Decimal, Decimal)> {
    let mut out = Vec::new();
    if let Some(limit) = q.spend_limit {
        out.push(("spend_limit".into(), period_total, limit));
    }
    if let Some(prepaid) = q.prepaid_balance {
        out.push((
            "prepaid_balance".into(),
            prepaid_used(owed, period_total, Decimal::ZERO),
            prepaid,
        ));
    }
    for (sku, limit) in &q.gpu_hours {
        let seconds = unit_seconds.get(sku).copied().unwrap_or_default();
        out.push((
            format!("gpu_hours.{sku}"),
            seconds / Decimal::from(3600),
            *limit,
        ));
    }
    out
}

/// The prepaid rule, in one place (issue 25): what a prepaid account has used of its wallet
/// is what its issued invoices still owe, plus the open period's provisional cost, plus its
/// live holds. Decisions measure it (no holds: `held` is zero), authorizations add the new
/// hold to it, and the balance shows the wallet less it ([`prepaid_available`]).
pub fn prepaid_used(owed: Decimal, period_cost: Decimal, held: Decimal) -> Decimal {
    owed + period_cost + held
}

/// What `gpu_hours[sku]` measures of a rated period: per sku, the unit-seconds of its
/// `on_demand`, `reserved_usage` and `spot` lines (the usage billed by the hour; usage a
/// package covered, increments' padding, minimums, waived spot and lease states do not
/// count). Used by billing-store `pricing/provisional.rs` on the provisional invoice.
pub fn unit_seconds(lines: &[Line]) -> BTreeMap<String, Decimal> {
    let mut out: BTreeMap<String, Decimal> = BTreeMap::new();
    for l in lines {
        if let Some(sku) = &l.sku
            && matches!(
                l.component,
                Component::OnDemand | Component::ReservedUsage | Component::Spot
            )
        {
            *out.entry(sku.clone()).or_default() += l.quantity;
        }
    }
    out
}

/// The prepaid rule's inputs (issue 12), in one place: a prepaid account (one whose stored
/// quotas set `prepaid_balance`, whatever its value) has its **wallet balance** as the limit,
/// and what its issued invoices still owe (`owed`, the wallet's outstanding) counts against
/// it (settlements have burned what the wallet paid). Returns the quotas to check, with
/// `prepaid_balance` replaced by `wallet`, and what counts as owed: `owed`, or 0 when the
/// account is not prepaid (then `wallet` and `owed` are not looked at; the store need not
/// read them). Used by billing-store `quota/spent.rs` (authorizations), `quota/decisions.rs`
/// (decisions) and `quota/limits.rs` (the balance).
pub fn against_wallet(quotas: &Quotas, wallet: Decimal, owed: Decimal) -> (Quotas, Decimal) {
    let mut q = quotas.clone();
    match q.prepaid_balance {
        Some(_) => {
            q.prepaid_balance = Some(wallet);
            (q, owed)
        }
        None => (q, Decimal::ZERO),
    }
}

/// What a prepaid account can still spend: its wallet less [`prepaid_used`] (negative when
/// it owes more than the wallet holds).
pub fn prepaid_available(
    wallet: Decimal,
    owed: Decimal,
    period_cost: Decimal,
    held: Decimal,
) -> Decimal {
    wallet - prepaid_used(owed, period_cost, held)
}

/// A usage key counts as running (for `max_concurrent`) while its last reported second is at
/// most this old: heartbeats come every 10 – 60 s, so two missed ones still count.
/// billing-store re-exports it as `billing_store::RUNNING_WINDOW_S`.
pub const RUNNING_WINDOW_S: i64 = 120;

/// The cutoff of [`RUNNING_WINDOW_S`] at `now_s`: a usage key whose last run ends after this
/// second counts as running ([`is_running`]). The store reads the keys ending after it.
pub fn running_since(now_s: i64) -> i64 {
    now_s - RUNNING_WINDOW_S
}

/// The meaning of "running" for `max_concurrent`: a usage key runs at `now_s` when its last
/// run ended within [`RUNNING_WINDOW_S`] before now (`last_end_s > now_s - 120`); it then
/// counts with that run's quantity. Used by billing-store `spent.rs`.
pub fn is_running(last_end_s: i64, now_s: i64) -> bool {
    last_end_s > running_since(now_s)
}

/// What counts against an account's quotas at an authorization (live holds included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spent {
    /// The open period's provisional invoice total.
    pub period_cost: Decimal,
    /// What issued invoices still owe (counts against a prepaid account's wallet; 0 when it
    /// is not prepaid): see [`against_wallet`].
    pub owed: Decimal,
    /// Live holds' amounts.
    pub held: Decimal,
    /// Per sku: live holds' units and unit-seconds.
    pub held_per_sku: BTreeMap<String, (Decimal, Decimal)>,
    /// Per sku: units running now.
    pub running: BTreeMap<String, Decimal>,
    /// Per sku: the open period's unit-seconds.
    pub sku_seconds: BTreeMap<String, Decimal>,
}

impl Spent {
    /// Counts a live hold as spent: its `amount` (spend limit and prepaid balance), its
    /// `quantity` as units of `sku` (`max_concurrent`) and `quantity x seconds` as
    /// unit-seconds of `sku` (`gpu_hours`). Used by billing-store `quota/spent.rs` for every
    /// live hold and every hold an authorization group places.
    pub fn add_hold(&mut self, sku: &str, quantity: Decimal, seconds: i64, amount: Decimal) {
        self.held += amount;
        let e = self.held_per_sku.entry(sku.to_string()).or_default();
        e.0 += quantity;
        e.1 += quantity * Decimal::from(seconds);
    }
}

/// The answer to one authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A hold of `amount` may be placed.
    Allowed { amount: Decimal },
    /// `quota` would be exceeded: what is used (live holds included), requested, the limit.
    Denied {
        quota: String,
        used: Decimal,
        requested: Decimal,
        limit: Decimal,
    },
}

fn cents(mut d: Decimal) -> Decimal {
    d.rescale(2);
    d
}

/// Decides an authorization of `quantity` units of `sku` for `seconds` at `rate_per_hour`
/// against the quotas and what is spent, checking in order: spend limit, prepaid balance,
/// concurrency, GPU-hours.
pub fn authorize(
    q: &Quotas,
    spent: &Spent,
    sku: &str,
    quantity: Decimal,
    seconds: i64,
    rate_per_hour: Decimal,
) -> Verdict {
    let amount = hold_amount(quantity, seconds, rate_per_hour);
    let denied =
        |quota: String, used: Decimal, requested: Decimal, limit: Decimal| Verdict::Denied {
            quota,
            used,
            requested,
            limit,
        };
    if let Some(limit) = q.spend_limit {
        let used = spent.period_cost + spent.held;
        if used + amount > limit {
            return denied("spend_limit".into(), cents(used), amount, cents(limit));
        }
    }
    if let Some(prepaid) = q.prepaid_balance {
        let used = prepaid_used(spent.owed, spent.period_cost, spent.held);
        if used + amount > prepaid {
            return denied(
                "prepaid_balance".into(),
                cents(used),
                amount,
                cents(prepaid),
            );
        }
    }
    let (held_units, held_unit_seconds) = spent.held_per_sku.get(sku).copied().unwrap_or_default();
    if let Some(limit) = q.max_concurrent.get(sku) {
        let used = held_units + spent.running.get(sku).copied().unwrap_or_default();
        if used + quantity > *limit {
            return denied(
                format!("max_concurrent.{sku}"),
                used.normalize(),
                quantity.normalize(),
                limit.normalize(),
            );
        }
    }
    if let Some(limit) = q.gpu_hours.get(sku) {
        let hour = Decimal::from(3600);
        let used =
            (spent.sku_seconds.get(sku).copied().unwrap_or_default() + held_unit_seconds) / hour;
        let requested = quantity * Decimal::from(seconds) / hour;
        if used + requested > *limit {
            return denied(
                format!("gpu_hours.{sku}"),
                used.normalize(),
                requested.normalize(),
                limit.normalize(),
            );
        }
    }
    Verdict::Allowed { amount }
}

#[cfg(test)]
mod tests;
