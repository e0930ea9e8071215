//! Account terms: reservations, discounts, credits (sections 3 and 12), packages (12),
//! subscriptions (13), and the SLA terms (10).

use super::model::{Reservation, Result, Sku};
use super::regions::Pricing;
use super::walk::{
    as_array, as_table, bounded, entries, instant, invalid, join, missing, only_keys, rate,
    required, required_string, string,
};
use crate::common::limits::{
    DEFAULT_ATTACH_SECONDS, MAX_ATTACH_SECONDS, MAX_COMPENSATION_MULTIPLIER, MAX_CREDIT,
    MAX_PACKAGE_HOURS, MAX_RESERVED_QUANTITY, MAX_SUBSCRIPTION_CYCLES, MAX_TERM_PRICE,
};
use crate::common::money::round_amount;
use crate::pricing::invoice::{Component, Line, LineDiscount, Unit};
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
    /// Section 19: the region it applies in (`None`: home).
    pub region: Option<String>,
}

/// `week` (7 x 86,400 s), `month` or `year` (calendar, in the timezone of the
/// subscription's region).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cycle {
    Week,
    Month,
    /// Section 17.
    Year,
}

/// What ending a subscription inside a cycle gives back (section 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Refund {
    #[default]
    None,
    /// The unused part of the cycle `end` falls in, pro rata, credited.
    Prorata,
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
    /// With `auto_renew`, the cycles that start before
    /// [`AUTO_RENEW_HORIZON`] (after every instant gpubill
    /// reads), so the cycles go on for as long as anything can be rated.
    pub cycles: u32,
    /// Per cycle.
    pub price: Decimal,
    /// Section 17: the cycles go on without a count.
    pub auto_renew: bool,
    /// Section 17: no cycle starts at or after `end`; counts in `R(s)` only for `s < end`.
    pub end: Option<i64>,
    pub refund: Refund,
    /// Section 19: the region it applies in (`None`: home).
    pub region: Option<String>,
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
    /// Section 19: the region whose invoices it applies to (`None`: home).
    pub region: Option<String>,
}

impl Credit {
    /// Whether the credit applies to the period `[start, end)`.
    pub fn applies_to(&self, start: i64, end: i64) -> bool {
        self.from.is_none_or(|f| f < end) && self.to.is_none_or(|t| t > start)
    }
}

/// A discount (sections 5 and 16). A discount with none of `skus`, `components`, `from`,
/// `to`, `cap` and `region` is *plain*: its percent joins `P`, taken off the whole subtotal.
/// Any other takes `min(cap, round(B x percent / 100, 2))` off the invoice of a period that
/// overlaps `[from, to)`, `B` the sum of the amounts of the lines it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discount {
    /// Position in the price book's `[[discounts]]`.
    pub index: usize,
    pub account: String,
    pub id: Option<String>,
    /// 0 to 100.
    pub percent: Decimal,
    /// Only lines of these skus (a line without `sku` matches only discounts without `skus`).
    pub skus: Option<Vec<String>>,
    /// Only lines of these components.
    pub components: Option<Vec<Component>>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// The most it takes off one invoice.
    pub cap: Option<Decimal>,
    /// Section 19: the region it applies in (`None`: home; a plain discount applies in every
    /// region).
    pub region: Option<String>,
}

impl Discount {
    /// Section 16: none of `skus`, `components`, `from`, `to`, `cap` and `region`.
    pub fn is_plain(&self) -> bool {
        self.skus.is_none()
            && self.components.is_none()
            && self.from.is_none()
            && self.to.is_none()
            && self.cap.is_none()
            && self.region.is_none()
    }

    /// Whether it applies to the invoice of the period `[start, end)`: the period overlaps
    /// `[from, to)`, a missing side open (as credits, section 12).
    pub fn applies_to(&self, start: i64, end: i64) -> bool {
        self.from.is_none_or(|f| f < end) && self.to.is_none_or(|t| t > start)
    }

    /// Whether it matches `line`: its sku among `skus` (a line without one only when the
    /// discount has no `skus`) and its component among `components`.
    pub fn matches(&self, line: &Line) -> bool {
        let sku_ok = match (&self.skus, &line.sku) {
            (None, _) => true,
            (Some(skus), Some(sku)) => skus.iter().any(|s| s == sku),
            (Some(_), None) => false,
        };
        sku_ok
            && self
                .components
                .as_ref()
                .is_none_or(|cs| cs.contains(&line.component))
    }
}

/// A one-off charge (section 20): billed once, as a `charge` line of the period holding `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// Position in the price book's `[[charges]]`.
    pub index: usize,
    pub account: String,
    pub id: String,
    pub description: Option<String>,
    /// Positive, at most 2 decimals.
    pub amount: Decimal,
    /// Floored to the second.
    pub at: i64,
    /// Section 19: the region it is billed in (`None`: home).
    pub region: Option<String>,
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

/// A required whole-second instant. Part 3 says instants of account terms are floored to
/// whole seconds; gpubill keeps refusing a fraction, as it did before part 3 (see
/// [`crate::choices`]).
/// An instant of an account term, floored to a whole second (part 3's preamble: "instants of
/// account terms are floored to whole seconds").
fn whole_second(t: &Table, path: &str, key: &str) -> Result<i64> {
    let ts = required(instant(t, path, key)?, path, key)?;
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

pub(super) fn parse_packages(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Package>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "packages")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &[
                "account", "id", "sku", "hours", "from", "to", "price", "region",
            ],
        )?;
        let (region, skus) = pricing.region_of(t, &path)?;
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
            region,
        });
    }
    Ok(out)
}

pub(super) fn parse_subscriptions(
    root: &Table,
    pricing: &Pricing<'_>,
) -> Result<Vec<Subscription>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "subscriptions")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &[
                "account",
                "id",
                "sku",
                "quantity",
                "cycle",
                "start",
                "cycles",
                "price",
                "auto_renew",
                "end",
                "refund",
                "region",
            ],
        )?;
        let (region, skus) = pricing.region_of(t, &path)?;
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
            "year" => Cycle::Year,
            _ => {
                return invalid(
                    &join(&path, "cycle"),
                    &t["cycle"],
                    "must be \"week\" or \"month\" or \"year\"",
                );
            }
        };
        let start = whole_second(t, &path, "start")?;
        let auto_renew = match t.get("auto_renew") {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(v) => return invalid(&join(&path, "auto_renew"), v, "must be true or false"),
        };
        let cycles = match (t.get("cycles"), auto_renew) {
            (None, false) => {
                return missing(&join(&path, "cycles"), "is required (or auto_renew = true)");
            }
            (None, true) => auto_renew_cycles(cycle, start),
            (Some(v), true) => {
                return invalid(
                    &join(&path, "cycles"),
                    v,
                    "give either cycles or auto_renew = true, not both",
                );
            }
            (Some(Value::Integer(n)), false) if (1..=MAX_SUBSCRIPTION_CYCLES).contains(n) => {
                *n as u32
            }
            (Some(v), false) => {
                return invalid(
                    &join(&path, "cycles"),
                    v,
                    format!("must be a whole number from 1 to {MAX_SUBSCRIPTION_CYCLES}"),
                );
            }
        };
        let price = money(t, &path, "price", MAX_TERM_PRICE)?;
        let end = optional_whole_second(t, &path, "end")?;
        let refund = match string(t, &path, "refund")? {
            None | Some("none") => Refund::None,
            Some("prorata") => Refund::Prorata,
            Some(_) => {
                return invalid(
                    &join(&path, "refund"),
                    &t["refund"],
                    "must be \"none\" or \"prorata\"",
                );
            }
        };
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
            auto_renew,
            end,
            refund,
            region,
        });
    }
    Ok(out)
}

pub(super) fn parse_credits(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Credit>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "credits")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &["account", "amount", "id", "from", "to", "region"],
        )?;
        let (region, _) = pricing.region_of(t, &path)?;
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
            region,
        });
    }
    Ok(out)
}

pub(super) fn parse_charges(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Charge>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "charges")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &["account", "id", "description", "amount", "at", "region"],
        )?;
        let (region, _) = pricing.region_of(t, &path)?;
        let account = required_string(t, &path, "account")?.to_string();
        let id = required_string(t, &path, "id")?.to_string();
        unique_id(&mut seen, t, &path, &account, &id)?;
        let description = string(t, &path, "description")?.map(str::to_string);
        let amount = money(t, &path, "amount", MAX_TERM_PRICE)?;
        if amount <= Decimal::ZERO {
            return invalid(
                &join(&path, "amount"),
                &t["amount"],
                "must be positive (a refund is a credit)",
            );
        }
        let at = whole_second(t, &path, "at")?;
        out.push(Charge {
            index,
            account,
            id,
            description,
            amount,
            at,
            region,
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

pub(super) fn parse_reservations(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Reservation>> {
    let mut out = Vec::new();
    for (index, (path, t)) in entries(root, "reservations")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &[
                "account",
                "sku",
                "quantity",
                "from",
                "to",
                "rate_per_hour",
                "region",
            ],
        )?;
        let (region, skus) = pricing.region_of(t, &path)?;
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
        let from = whole_second(t, &path, "from")?;
        let to = whole_second(t, &path, "to")?;
        if from >= to {
            return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
        }
        let rate_per_hour = required(rate(t, &path, "rate_per_hour")?, &path, "rate_per_hour")?;
        out.push(Reservation {
            index,
            account,
            sku,
            quantity,
            from,
            to,
            rate_per_hour,
            region,
        });
    }
    Ok(out)
}

pub(super) fn parse_discounts(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Discount>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "discounts")?.into_iter().enumerate() {
        only_keys(
            t,
            &path,
            &[
                "account",
                "percent",
                "id",
                "skus",
                "components",
                "from",
                "to",
                "cap",
                "region",
            ],
        )?;
        let (region, skus) = pricing.region_of(t, &path)?;
        let account = required_string(t, &path, "account")?.to_string();
        let percent = bounded(
            t,
            &path,
            "percent",
            Decimal::ZERO,
            true,
            Decimal::ONE_HUNDRED,
        )?;
        let percent = required(percent, &path, "percent")?;
        let id = string(t, &path, "id")?.map(str::to_string);
        if let Some(id) = &id {
            unique_id(&mut seen, t, &path, &account, id)?;
        }
        let skus = match t.get("skus") {
            None => None,
            Some(v) => Some(names(v, &join(&path, "skus"), "sku", |name| {
                skus.contains_key(name)
                    .then(|| name.to_string())
                    .ok_or("unknown sku: not defined under [skus]".to_string())
            })?),
        };
        let components = match t.get("components") {
            None => None,
            Some(v) => Some(names(v, &join(&path, "components"), "component", |name| {
                Component::parse(name).ok_or_else(|| {
                    "unknown component (a line's component, such as \"on_demand\", \"spot\" or \"state:stopped\")".to_string()
                })
            })?),
        };
        let from = optional_whole_second(t, &path, "from")?;
        let to = optional_whole_second(t, &path, "to")?;
        if let (Some(f), Some(to_s)) = (from, to)
            && f >= to_s
        {
            return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
        }
        let cap = match t.get("cap") {
            None => None,
            Some(_) => Some(money(t, &path, "cap", MAX_CREDIT)?),
        };
        out.push(Discount {
            index,
            account,
            id,
            percent,
            skus,
            components,
            from,
            to,
            cap,
            region,
        });
    }
    Ok(out)
}

/// A non-empty array of strings, each turned into a `T` by `read` (its error names the entry).
fn names<T>(
    v: &Value,
    path: &str,
    what: &str,
    mut read: impl FnMut(&str) -> std::result::Result<T, String>,
) -> Result<Vec<T>> {
    let list = as_array(v, path)?;
    if list.is_empty() {
        return invalid(
            path,
            v,
            format!("must name at least one {what} (omit it for every {what})"),
        );
    }
    let mut out = Vec::with_capacity(list.len());
    for (j, e) in list.iter().enumerate() {
        let p = format!("{path}[{j}]");
        match e.as_str() {
            Some(name) => match read(name) {
                Ok(x) => out.push(x),
                Err(message) => return invalid(&p, e, message),
            },
            None => return invalid(&p, e, "must be a string"),
        }
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

/// Auto-renewing subscriptions have the cycles that start before this instant: 400 days
/// after the last instant gpubill reads (2100-01-01T00:00:00Z), so every period that can hold
/// an event is covered, in any timezone.
pub const AUTO_RENEW_HORIZON: i64 = crate::common::limits::MAX_EVENT_SECS + 400 * 86_400;

/// The number of cycles of an auto-renewing subscription: at least those starting before
/// [`AUTO_RENEW_HORIZON`] (a month has at least 28 days, a year 365, in any timezone).
pub fn auto_renew_cycles(cycle: Cycle, start: i64) -> u32 {
    let left = (AUTO_RENEW_HORIZON - start).max(0);
    let shortest = match cycle {
        Cycle::Week => 7 * 86_400,
        Cycle::Month => 28 * 86_400,
        Cycle::Year => 365 * 86_400,
    };
    u32::try_from(left / shortest + 1).unwrap_or(u32::MAX)
}

/// What a discount other than a plain one takes off: `min(cap, round(B x percent / 100, 2))`,
/// `B` the sum of the amounts of the lines it matches (section 16).
impl LineDiscount for Discount {
    fn taken(&self, lines: &[Line]) -> Decimal {
        let matched: Decimal = lines
            .iter()
            .filter(|l| self.matches(l))
            .map(|l| l.amount)
            .sum();
        let taken = round_amount(matched * self.percent / Decimal::ONE_HUNDRED);
        match self.cap {
            Some(cap) => taken.min(round_amount(cap)),
            None => taken,
        }
    }
}

impl Charge {
    /// Section 20: the `charge` line of a one-off charge (quantity 1, unit `charge`, no sku).
    pub fn line(&self) -> Line {
        Line {
            component: Component::Charge,
            sku: None,
            dest: None,
            tier: 0,
            multiplier: None,
            price: None,
            package: None,
            subscription: None,
            charge: Some(self.id.clone()),
            description: self.description.clone(),
            quantity: Decimal::ONE,
            unit: Unit::Charge,
            amount: round_amount(self.amount),
            compensation: None,
            refund: None,
            seq: self.index,
        }
    }
}
