//! Account terms: reservations, discounts, credits (sections 3 and 12), packages (12),
//! subscriptions (13), and the SLA terms (10).

use super::model::{Reservation, Result, Sku};
use super::walk::{
    as_table, bounded, entries, instant, invalid, join, missing, only_keys, rate, required,
    required_string, string,
};
use crate::common::limits::{
    DEFAULT_ATTACH_SECONDS, MAX_ATTACH_SECONDS, MAX_COMPENSATION_MULTIPLIER, MAX_CREDIT,
    MAX_PACKAGE_HOURS, MAX_RESERVED_QUANTITY, MAX_SUBSCRIPTION_CYCLES, MAX_TERM_PRICE,
};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use toml::{Table, Value};

/// A prepaid package of unit-hours of one sku (section 12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Position in the price book's `[[packages]]`.
    pub index: usize,
    pub account: String,
    pub id: String,
    pub sku: String,
    /// `hours x 3600`: the balance at `from`.
    pub unit_seconds: Decimal,
    /// Usable for seconds in `[from, to)`.
    pub from: i64,
    pub to: i64,
    /// Billed once, in the period holding `from`.
    pub price: Decimal,
}

/// `week` (7 x 86,400 s) or `month` (calendar, in the price book's timezone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cycle {
    Week,
    Month,
}

/// A subscription (section 13): `cycles` cycles of `quantity` reserved units from `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub index: usize,
    pub account: String,
    pub id: String,
    pub sku: String,
    pub quantity: Decimal,
    pub cycle: Cycle,
    pub start: i64,
    pub cycles: u32,
    /// Per cycle.
    pub price: Decimal,
}

/// A credit (sections 3 and 12): applies to periods overlapping `[from, to)`, an absent
/// side open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    /// Position in the price book's `[[credits]]` (ties and open credits draw in this order).
    pub index: usize,
    pub account: String,
    pub id: Option<String>,
    pub amount: Decimal,
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl Credit {
    /// Whether the credit applies to the period `[start, end)`.
    pub fn applies_to(&self, start: i64, end: i64) -> bool {
        self.from.is_none_or(|f| f < end) && self.to.is_none_or(|t| t > start)
    }
}

/// `[sla]` (section 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sla {
    /// No default: without it there is no compensation.
    pub compensation_multiplier: Option<Decimal>,
    pub attach_seconds: i64,
}

impl Default for Sla {
    fn default() -> Self {
        Sla {
            compensation_multiplier: None,
            attach_seconds: DEFAULT_ATTACH_SECONDS,
        }
    }
}

/// A required whole-second instant.
fn whole_second(t: &Table, path: &str, key: &str) -> Result<i64> {
    let ts = required(instant(t, path, key)?, path, key)?;
    if ts.nanos != 0 {
        return invalid(&join(path, key), &t[key], "must be a whole second");
    }
    Ok(ts.secs)
}

fn optional_whole_second(t: &Table, path: &str, key: &str) -> Result<Option<i64>> {
    match t.get(key) {
        None => Ok(None),
        Some(_) => whole_second(t, path, key).map(Some),
    }
}

/// A money amount: a decimal in `[0, max]` with at most the currency's 2 decimals.
fn money(t: &Table, path: &str, key: &str, max: Decimal) -> Result<Decimal> {
    let amount = required(bounded(t, path, key, Decimal::ZERO, true, max)?, path, key)?;
    if let Err(e) = crate::common::decimal::check_money(amount) {
        return invalid(&join(path, key), &t[key], e.to_string());
    }
    Ok(amount)
}

/// An sku that counts at rule 4.2 (reservations, packages, subscriptions) needs an
/// on-demand price.
fn on_demand_sku(
    t: &Table,
    path: &str,
    skus: &BTreeMap<String, Sku>,
    what: &str,
) -> Result<String> {
    let sku = required_string(t, path, "sku")?.to_string();
    match skus.get(&sku) {
        None => invalid(
            &join(path, "sku"),
            &t["sku"],
            "unknown sku: not defined under [skus]",
        ),
        Some(s) if s.on_demand_tiers().is_none() => invalid(
            &join(path, "sku"),
            &t["sku"],
            format!("{what} needs an on-demand price (rate_per_hour or tiers)"),
        ),
        Some(_) => Ok(sku),
    }
}

/// Term ids are unique per account (they name lines and order draws).
fn unique_id(
    seen: &mut BTreeSet<(String, String)>,
    t: &Table,
    path: &str,
    account: &str,
    id: &str,
) -> Result<()> {
    if !seen.insert((account.to_string(), id.to_string())) {
        return invalid(
            &join(path, "id"),
            &t["id"],
            format!("another term of account {account:?} has this id"),
        );
    }
    Ok(())
}

pub(super) fn parse_packages(root: &Table, skus: &BTreeMap<String, Sku>) -> Result<Vec<Package>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "packages")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &["account", "id", "sku", "hours", "from", "to", "price"],
        )?;
        let account = required_string(t, &path, "account")?.to_string();
        let id = required_string(t, &path, "id")?.to_string();
        unique_id(&mut seen, t, &path, &account, &id)?;
        let sku = on_demand_sku(t, &path, skus, "a package's sku")?;
        let hours = bounded(t, &path, "hours", Decimal::ZERO, false, MAX_PACKAGE_HOURS)?;
        let hours = required(hours, &path, "hours")?;
        let from = whole_second(t, &path, "from")?;
        let to = whole_second(t, &path, "to")?;
        if from >= to {
            return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
        }
        let price = money(t, &path, "price", MAX_TERM_PRICE)?;
        out.push(Package {
            index,
            account,
            id,
            sku,
            unit_seconds: hours * Decimal::from(3600),
            from,
            to,
            price,
        });
    }
    Ok(out)
}

pub(super) fn parse_subscriptions(
    root: &Table,
    skus: &BTreeMap<String, Sku>,
) -> Result<Vec<Subscription>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "subscriptions")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &[
                "account", "id", "sku", "quantity", "cycle", "start", "cycles", "price",
            ],
        )?;
        let account = required_string(t, &path, "account")?.to_string();
        let id = required_string(t, &path, "id")?.to_string();
        unique_id(&mut seen, t, &path, &account, &id)?;
        let sku = on_demand_sku(t, &path, skus, "a subscription's sku")?;
        let quantity = bounded(
            t,
            &path,
            "quantity",
            Decimal::ZERO,
            false,
            MAX_RESERVED_QUANTITY,
        )?;
        let quantity = required(quantity, &path, "quantity")?;
        let cycle = match required_string(t, &path, "cycle")? {
            "week" => Cycle::Week,
            "month" => Cycle::Month,
            _ => {
                return invalid(
                    &join(&path, "cycle"),
                    &t["cycle"],
                    "must be \"week\" or \"month\"",
                );
            }
        };
        let start = whole_second(t, &path, "start")?;
        let cycles = match t.get("cycles") {
            None => return missing(&join(&path, "cycles"), "is required"),
            Some(Value::Integer(n)) if (1..=MAX_SUBSCRIPTION_CYCLES).contains(n) => *n as u32,
            Some(v) => {
                return invalid(
                    &join(&path, "cycles"),
                    v,
                    format!("must be a whole number from 1 to {MAX_SUBSCRIPTION_CYCLES}"),
                );
            }
        };
        let price = money(t, &path, "price", MAX_TERM_PRICE)?;
        out.push(Subscription {
            index,
            account,
            id,
            sku,
            quantity,
            cycle,
            start,
            cycles,
            price,
        });
    }
    Ok(out)
}

pub(super) fn parse_credits(root: &Table) -> Result<Vec<Credit>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "credits")?.into_iter().enumerate() {
        only_keys(t, &path, &["account", "amount", "id", "from", "to"])?;
        let account = required_string(t, &path, "account")?.to_string();
        let amount = money(t, &path, "amount", MAX_CREDIT)?;
        let id = string(t, &path, "id")?.map(str::to_string);
        if let Some(id) = &id {
            unique_id(&mut seen, t, &path, &account, id)?;
        }
        let from = optional_whole_second(t, &path, "from")?;
        let to = optional_whole_second(t, &path, "to")?;
        if let (Some(f), Some(to_s)) = (from, to)
            && f >= to_s
        {
            return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
        }
        out.push(Credit {
            index,
            account,
            id,
            amount,
            from,
            to,
        });
    }
    Ok(out)
}

pub(super) fn parse_sla(root: &Table) -> Result<Sla> {
    let Some(v) = root.get("sla") else {
        return Ok(Sla::default());
    };
    let t = as_table(v, "sla")?;
    only_keys(t, "sla", &["compensation_multiplier", "attach_seconds"])?;
    let compensation_multiplier = bounded(
        t,
        "sla",
        "compensation_multiplier",
        Decimal::ZERO,
        true,
        MAX_COMPENSATION_MULTIPLIER,
    )?;
    let attach_seconds = match t.get("attach_seconds") {
        None => DEFAULT_ATTACH_SECONDS,
        Some(Value::Integer(n)) if (1..=MAX_ATTACH_SECONDS).contains(n) => *n,
        Some(v) => {
            return invalid(
                "sla.attach_seconds",
                v,
                format!("must be a whole number of seconds from 1 to {MAX_ATTACH_SECONDS}"),
            );
        }
    };
    Ok(Sla {
        compensation_multiplier,
        attach_seconds,
    })
}

pub(super) fn parse_reservations(
    root: &Table,
    skus: &BTreeMap<String, Sku>,
) -> Result<Vec<Reservation>> {
    let mut out = Vec::new();
    for (index, (path, t)) in entries(root, "reservations")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &["account", "sku", "quantity", "from", "to", "rate_per_hour"],
        )?;
        let account = required_string(t, &path, "account")?.to_string();
        let sku = required_string(t, &path, "sku")?.to_string();
        match skus.get(&sku) {
            None => {
                return invalid(
                    &join(&path, "sku"),
                    &t["sku"],
                    "unknown sku: not defined under [skus]",
                );
            }
            Some(s) if s.on_demand_tiers().is_none() => {
                return invalid(
                    &join(&path, "sku"),
                    &t["sku"],
                    "a reserved sku needs an on-demand price (rate_per_hour or tiers)",
                );
            }
            Some(_) => {}
        }
        let quantity = bounded(
            t,
            &path,
            "quantity",
            Decimal::ZERO,
            false,
            MAX_RESERVED_QUANTITY,
        )?;
        let quantity = required(quantity, &path, "quantity")?;
        let from = required(instant(t, &path, "from")?, &path, "from")?;
        let to = required(instant(t, &path, "to")?, &path, "to")?;
        for (k, ts) in [("from", from), ("to", to)] {
            if ts.nanos != 0 {
                return invalid(&join(&path, k), &t[k], "must be a whole second");
            }
        }
        if from >= to {
            return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
        }
        let rate_per_hour = required(rate(t, &path, "rate_per_hour")?, &path, "rate_per_hour")?;
        out.push(Reservation {
            index,
            account,
            sku,
            quantity,
            from: from.secs,
            to: to.secs,
            rate_per_hour,
        });
    }
    Ok(out)
}

pub(super) fn parse_account_amounts(
    root: &Table,
    section: &str,
    key: &str,
    max: Decimal,
    money: bool,
) -> Result<BTreeMap<String, Decimal>> {
    let mut out: BTreeMap<String, Decimal> = BTreeMap::new();
    for (path, t) in entries(root, section)? {
        only_keys(t, &path, &["account", key])?;
        let account = required_string(t, &path, "account")?.to_string();
        let amount = required(
            bounded(t, &path, key, Decimal::ZERO, true, max)?,
            &path,
            key,
        )?;
        if money && let Err(e) = crate::common::decimal::check_money(amount) {
            return invalid(&join(&path, key), &t[key], e.to_string());
        }
        *out.entry(account).or_default() += amount;
    }
    Ok(out)
}
