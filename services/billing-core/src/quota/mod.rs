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
use crate::pricing::pricebook::PriceBook;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// The rate a hold on `sku` reserves at, per unit-hour: the sku's first-tier (or plain)
/// on-demand rate ([`crate::pricing::pricebook::Sku::first_rate`]), whatever the lease will run as
/// (spot rates, off-peak multipliers and later tiers are not looked at). None when the book
/// has no such sku or the sku has no on-demand rate (the store then answers with its unknown
/// sku error). Used by billing-store `authorize.rs`.
pub fn hold_rate(book: &PriceBook, sku: &str) -> Option<Decimal> {
    book.skus.get(sku).and_then(|s| s.first_rate())
}

/// Default life of a hold without `ttl_seconds`, in seconds (an authorization or an
/// extension).
pub const DEFAULT_HOLD_TTL_S: i64 = 300;
/// Longest life of a hold per call, in seconds (extend to keep it longer).
pub const MAX_HOLD_TTL_S: i64 = 86_400;

/// A requested hold life out of `1..=`[`MAX_HOLD_TTL_S`] seconds: the value asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtlOutOfRange(pub i64);

/// A hold's life in milliseconds from a requested `ttl_seconds`: [`DEFAULT_HOLD_TTL_S`] when
/// none is given, else the request when it is 1 to [`MAX_HOLD_TTL_S`] seconds, else
/// [`TtlOutOfRange`] (the API answers 422 with its own message). Used by billing-api
/// `quota.rs` for `POST /v1/authorize` and `POST /v1/holds/{id}/extend`.
pub fn hold_ttl_ms(ttl_seconds: Option<i64>) -> Result<i64, TtlOutOfRange> {
    let ttl = ttl_seconds.unwrap_or(DEFAULT_HOLD_TTL_S);
    if !(1..=MAX_HOLD_TTL_S).contains(&ttl) {
        return Err(TtlOutOfRange(ttl));
    }
    Ok(ttl * 1000)
}

/// A hold's amount: `quantity x seconds` at `rate` per unit-hour, rounded **up** to the cent,
/// so a hold never reserves less than the usage it stands for (and a priced hold is never
/// 0.00).
pub fn hold_amount(quantity: Decimal, seconds: i64, rate_per_hour: Decimal) -> Decimal {
    let mut a = (quantity * Decimal::from(seconds) * rate_per_hour / Decimal::from(3600))
        .round_dp_with_strategy(2, RoundingStrategy::AwayFromZero);
    a.rescale(2);
    a
}

/// The longest hold `POST /v1/authorize` takes: 30 days of usage.
pub const MAX_HOLD_SECONDS: i64 = 30 * 86_400;

/// The largest quantity one hold may reserve (units of the sku).
pub const MAX_HOLD_QUANTITY: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

/// Whether a hold request's size is one the engine takes: a quantity above 0 and at most
/// [`MAX_HOLD_QUANTITY`], for 1 to [`MAX_HOLD_SECONDS`] seconds. The error names the field
/// and its value.
pub fn check_hold_size(quantity: Decimal, seconds: i64) -> Result<(), String> {
    if quantity <= Decimal::ZERO || quantity > MAX_HOLD_QUANTITY {
        return Err(format!(
            "quantity = {quantity}: must be above 0 and at most {MAX_HOLD_QUANTITY} units"
        ));
    }
    if !(1..=MAX_HOLD_SECONDS).contains(&seconds) {
        return Err(format!(
            "seconds = {seconds}: must be 1 to {MAX_HOLD_SECONDS} (30 days)"
        ));
    }
    Ok(())
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
mod tests {
    #[test]
    fn prepaid_available_is_the_wallet_less_owed_cost_and_holds() {
        // Wallet 90.00; an invoice still owes 11.66, the open period has cost 5.34 so far and
        // a live hold reserves 3.00: 70.00 can still be spent, 20.00 is used.
        let (wallet, owed, cost, held) = (d("90.00"), d("11.66"), d("5.34"), d("3.00"));
        assert_eq!(super::prepaid_used(owed, cost, held), d("20.00"));
        assert_eq!(
            super::prepaid_available(wallet, owed, cost, held),
            d("70.00")
        );
        // Owing more than the wallet holds: negative.
        assert_eq!(
            super::prepaid_available(d("10.00"), owed, cost, held),
            d("-10.00")
        );
    }

    #[test]
    fn a_prepaid_account_is_limited_by_its_wallet_less_what_it_owes() {
        // Stored prepaid_balance 1000.00 (only turns the rule on), wallet 90.00, invoices
        // still owe 11.66: the limit checked is 90.00 and 11.66 counts against it. With an open
        // period's cost of 5.34 a decision measures 11.66 + 5.34 = 17.00 used of 90.00.
        let q = quotas(r#"{"prepaid_balance":"1000.00","spend_limit":"500.00"}"#);
        let (checked, owed) = against_wallet(&q, d("90.00"), d("11.66"));
        assert_eq!(checked.prepaid_balance, Some(d("90.00")));
        assert_eq!(checked.spend_limit, Some(d("500.00")));
        assert_eq!(owed, d("11.66"));
        assert_eq!(
            measures(&checked, d("5.34"), owed, &BTreeMap::new())[1],
            ("prepaid_balance".to_string(), d("17.00"), d("90.00"))
        );
        // An authorization of 73.01 more does not fit (17.00 + 73.01 > 90.00), 73.00 does.
        let spent = Spent {
            period_cost: d("5.34"),
            owed,
            ..Spent::default()
        };
        assert!(matches!(
            authorize(&checked, &spent, "h100", d("1"), 3600, d("73.01")),
            Verdict::Denied { ref quota, .. } if quota == "prepaid_balance"
        ));
        assert_eq!(
            authorize(&checked, &spent, "h100", d("1"), 3600, d("73.00")),
            Verdict::Allowed { amount: d("73.00") }
        );
        // Not prepaid: nothing owed counts and the quotas stay as they are.
        let q = quotas(r#"{"spend_limit":"500.00"}"#);
        assert_eq!(
            against_wallet(&q, d("90.00"), d("11.66")),
            (q, Decimal::ZERO)
        );
    }

    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn a_stored_level_reads_back_and_an_unknown_one_is_none() {
        for level in [Level::Ok, Level::Warn, Level::Limit] {
            assert_eq!(Level::parse(level.as_str()), Some(level));
        }
        assert_eq!(Level::parse("critical"), None);
        assert_eq!(Level::parse(""), None);
    }

    fn quotas(json: &str) -> Quotas {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn levels_and_the_decisions_between_them() {
        let w = DEFAULT_WARN_AT;
        assert_eq!(Level::of(d("79.99"), d("100"), w), Level::Ok);
        assert_eq!(Level::of(d("80"), d("100"), w), Level::Warn);
        assert_eq!(Level::of(d("100"), d("100"), w), Level::Limit);
        assert_eq!(Level::Ok.decisions_to(Level::Limit), ["warn", "limit"]);
        assert_eq!(Level::Warn.decisions_to(Level::Limit), ["limit"]);
        assert_eq!(Level::Limit.decisions_to(Level::Warn), ["warn"]);
        assert_eq!(Level::Limit.decisions_to(Level::Ok), ["clear"]);
        assert!(Level::Warn.decisions_to(Level::Warn).is_empty());
    }

    #[test]
    fn measures_of_a_period() {
        let q = quotas(
            r#"{"spend_limit":"500.00","prepaid_balance":"1000.00","gpu_hours":{"h100":"10"}}"#,
        );
        let secs = BTreeMap::from([("h100".to_string(), d("18000"))]);
        let m = measures(&q, d("120.50"), d("300.00"), &secs);
        assert_eq!(
            m,
            vec![
                ("spend_limit".to_string(), d("120.50"), d("500.00")),
                ("prepaid_balance".to_string(), d("420.50"), d("1000.00")),
                ("gpu_hours.h100".to_string(), d("5"), d("10")),
            ]
        );
    }

    #[test]
    fn gpu_hours_count_on_demand_reserved_and_spot_seconds() {
        // h100: 7200 on-demand + 3600 reserved + 1800 spot = 12 600 unit-seconds (3.5 h); the
        // 3600 a package covered and a minimum's 60 do not count; a100: 900 on demand.
        let line = |c, sku, secs: &str| Line::usage(c, sku, 0, d(secs), d("0"));
        let lines = [
            line(Component::OnDemand, "h100", "7200"),
            line(Component::ReservedUsage, "h100", "3600"),
            line(Component::Spot, "h100", "1800"),
            line(Component::PackageUsage, "h100", "3600"),
            line(Component::Minimum, "h100", "60"),
            line(Component::OnDemand, "a100", "900"),
        ];
        let secs = unit_seconds(&lines);
        assert_eq!(
            secs,
            BTreeMap::from([("a100".into(), d("900")), ("h100".into(), d("12600"))])
        );
        let q = quotas(r#"{"gpu_hours":{"h100":"10"}}"#);
        assert_eq!(
            measures(&q, d("0"), d("0"), &secs),
            vec![("gpu_hours.h100".to_string(), d("3.5"), d("10"))]
        );
    }

    #[test]
    fn running_means_a_last_run_ending_within_the_window() {
        // Now is 10_000 s: the cutoff is 10_000 - 120 = 9_880. A run ending at 9_881 (119 s
        // ago) runs; one ending at 9_880 (exactly 120 s ago) or earlier does not.
        assert_eq!(running_since(10_000), 9_880);
        assert!(is_running(9_881, 10_000));
        assert!(is_running(10_000, 10_000));
        assert!(!is_running(9_880, 10_000));
        assert!(!is_running(9_000, 10_000));
    }

    #[test]
    fn a_hold_reserves_at_the_first_on_demand_tier() {
        // Tiers 24.00/h for the first 2 h then 20.00/h, spot 9.60/h: a hold reserves 24.00/h
        // (1 unit for 1 h: 24.00); a plain sku its rate; a spot-only or unknown sku none.
        let book = PriceBook::from_toml(
            r#"
currency = "CNY"
[skus."gpu.h100"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"
tiers = [ { up_to_hours = 2, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
[skus."storage.ssd"]
rate_per_hour = "0.0002"
[skus."gpu.spot-only"]
spot_rate_per_hour = "5.00"
"#,
        )
        .unwrap();
        let rate = hold_rate(&book, "gpu.h100").unwrap();
        assert_eq!(rate, d("24.00"));
        assert_eq!(hold_amount(d("1"), 3600, rate).to_string(), "24.00");
        assert_eq!(hold_rate(&book, "storage.ssd"), Some(d("0.0002")));
        assert_eq!(hold_rate(&book, "gpu.spot-only"), None);
        assert_eq!(hold_rate(&book, "gpu.a100"), None);
    }

    #[test]
    fn hold_ttls_default_to_five_minutes_and_stop_at_a_day() {
        // No ttl: 300 s = 300_000 ms; 60 s = 60_000 ms; 86_400 s (a day) is the longest;
        // 0, -1 and 86_401 s are refused with the value asked for.
        assert_eq!(hold_ttl_ms(None), Ok(300_000));
        assert_eq!(hold_ttl_ms(Some(60)), Ok(60_000));
        assert_eq!(hold_ttl_ms(Some(1)), Ok(1_000));
        assert_eq!(hold_ttl_ms(Some(86_400)), Ok(86_400_000));
        assert_eq!(hold_ttl_ms(Some(0)), Err(TtlOutOfRange(0)));
        assert_eq!(hold_ttl_ms(Some(-1)), Err(TtlOutOfRange(-1)));
        assert_eq!(hold_ttl_ms(Some(86_401)), Err(TtlOutOfRange(86_401)));
    }

    #[test]
    fn hold_sizes_stop_at_a_million_units_and_thirty_days() {
        // 0.5 unit for 1 s and 1 000 000 units for 30 days (2 592 000 s) are taken; 0 or -1
        // units, 1 000 000.01 units, 0 s and 2 592 001 s are refused, naming the value.
        assert_eq!(MAX_HOLD_SECONDS, 2_592_000);
        assert_eq!(check_hold_size(d("0.5"), 1), Ok(()));
        assert_eq!(check_hold_size(d("1000000"), 2_592_000), Ok(()));
        assert_eq!(
            check_hold_size(d("0"), 60),
            Err("quantity = 0: must be above 0 and at most 1000000 units".into())
        );
        assert!(check_hold_size(d("-1"), 60).is_err());
        assert_eq!(
            check_hold_size(d("1000000.01"), 60),
            Err("quantity = 1000000.01: must be above 0 and at most 1000000 units".into())
        );
        assert_eq!(
            check_hold_size(d("1"), 0),
            Err("seconds = 0: must be 1 to 2592000 (30 days)".into())
        );
        assert_eq!(
            check_hold_size(d("1"), 2_592_001),
            Err("seconds = 2592001: must be 1 to 2592000 (30 days)".into())
        );
    }

    #[test]
    fn holds_round_up_to_the_cent() {
        // 1 unit for 1 s at 24.00/h = 0.00666.. -> 0.01; 2 units for 60 s at 36/h = 1.20.
        assert_eq!(hold_amount(d("1"), 1, d("24.00")).to_string(), "0.01");
        assert_eq!(hold_amount(d("2"), 60, d("36")).to_string(), "1.20");
        assert_eq!(hold_amount(d("1"), 60, d("0")).to_string(), "0.00");
    }

    #[test]
    fn a_hold_counts_its_amount_units_and_unit_seconds() {
        // 2 h100 for 1800 s holding 24.00 and 1 h100 for 600 s holding 4.00: 3 units,
        // 2 x 1800 + 600 = 4200 unit-seconds; 0.5 a100 for 60 s holding 0.50: 30
        // unit-seconds; 24.00 + 4.00 + 0.50 = 28.50 held in all.
        let mut spent = Spent::default();
        spent.add_hold("h100", d("2"), 1800, d("24.00"));
        spent.add_hold("h100", d("1"), 600, d("4.00"));
        spent.add_hold("a100", d("0.5"), 60, d("0.50"));
        assert_eq!(spent.held, d("28.50"));
        assert_eq!(spent.held_per_sku["h100"], (d("3"), d("4200")));
        assert_eq!(spent.held_per_sku["a100"], (d("0.5"), d("30")));
    }

    #[test]
    fn authorizations_check_each_quota_with_live_holds() {
        let q = quotas(
            r#"{"spend_limit":"10.00","max_concurrent":{"h100":"8"},"gpu_hours":{"h100":"2"}}"#,
        );
        let mut spent = Spent {
            period_cost: d("8.00"),
            held: d("1.00"),
            ..Spent::default()
        };
        // 0.50 more fits (9.50 <= 10.00); 1.20 does not.
        assert_eq!(
            authorize(&q, &spent, "h100", d("1"), 50, d("36")),
            Verdict::Allowed { amount: d("0.50") }
        );
        assert_eq!(
            authorize(&q, &spent, "h100", d("2"), 60, d("36")),
            Verdict::Denied {
                quota: "spend_limit".into(),
                used: d("9.00"),
                requested: d("1.20"),
                limit: d("10.00")
            }
        );
        spent.period_cost = d("0");
        spent.running.insert("h100".into(), d("6"));
        spent
            .held_per_sku
            .insert("h100".into(), (d("1"), d("3600")));
        assert!(matches!(
            authorize(&q, &spent, "h100", d("2"), 1, d("36")),
            Verdict::Denied { ref quota, .. } if quota == "max_concurrent.h100"
        ));
        // 1 h held + 1.5 h asked > 2 h.
        assert!(matches!(
            authorize(&q, &spent, "h100", d("1"), 5400, d("0")),
            Verdict::Denied { ref quota, .. } if quota == "gpu_hours.h100"
        ));
        assert!(matches!(
            authorize(&q, &spent, "h100", d("1"), 3600, d("0")),
            Verdict::Allowed { .. }
        ));
    }
}
