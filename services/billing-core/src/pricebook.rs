//! The price book in TOML: billing-semantics.md section 3.
//!
//! Parsed by walking the TOML tree by hand so that every error names the offending key (as a
//! path such as `skus."gpu.h100-80g".tiers[1].up_to_hours`) and its value. Unknown keys are
//! errors too: a misspelt `rate_per_hr` must not silently bill nothing.
//!
//! Choices where the page is silent:
//! - Decimals (rates, bounds, quantities, percents) are strings or TOML integers; TOML floats
//!   are rejected because they may already be inexact.
//! - `timezone` defaults to `UTC`; `currency` is required.
//! - An sku needs at least one of `rate_per_hour`, `tiers`, `spot_rate_per_hour`; on-demand
//!   usage of an sku with neither `rate_per_hour` nor `tiers` is unpriced.
//! - A reservation must name an sku with an on-demand price, and its `from`/`to` must be whole
//!   seconds with `from < to`.
//! - Discount percents of one account add up to at most 100.
//! - An egress table takes `tiers` or a flat `rate_per_gb`.
//! - Off-peak `to` may be `"24:00"`; times may carry seconds (`"06:30:15"`).

use crate::limits::{
    MAX_CREDIT, MAX_MINIMUM_SECONDS, MAX_MULTIPLIER, MAX_RATE, MAX_RESERVED_QUANTITY,
    MAX_STRING_BYTES,
};
use crate::offpeak::{ALL_DAYS, OffpeakWindow, WEEKDAYS};
use crate::tiers::{Tier, TierMode};
use crate::timestamp::Timestamp;
use chrono_tz::Tz;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use toml::{Table, Value};

/// Most off-peak windows in one price book.
pub const MAX_OFFPEAK_WINDOWS: usize = 64;
/// Most tiers of one sku or egress dest.
pub const MAX_TIERS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceBookError {
    #[error("price book is not valid TOML: {0}")]
    Syntax(String),
    #[error("{key} = {value}: {message}")]
    Invalid {
        key: String,
        value: String,
        message: String,
    },
    #[error("{key}: {message}")]
    Missing { key: String, message: String },
}

impl PriceBookError {
    /// The path of the offending key (empty for syntax errors).
    pub fn key(&self) -> &str {
        match self {
            PriceBookError::Syntax(_) => "",
            PriceBookError::Invalid { key, .. } | PriceBookError::Missing { key, .. } => key,
        }
    }
}

type Result<T> = std::result::Result<T, PriceBookError>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sku {
    pub rate_per_hour: Option<Decimal>,
    pub spot_rate_per_hour: Option<Decimal>,
    pub minimum_seconds: Option<i64>,
    pub tier_mode: TierMode,
    /// Bounds in unit-seconds (`up_to_hours x 3600`), rates per unit-hour.
    pub tiers: Vec<Tier>,
}

impl Sku {
    /// The on-demand tiers, a plain rate being one unbounded tier.
    pub fn on_demand_tiers(&self) -> Option<Vec<Tier>> {
        if !self.tiers.is_empty() {
            Some(self.tiers.clone())
        } else {
            self.rate_per_hour
                .map(|rate| vec![Tier { up_to: None, rate }])
        }
    }

    /// First-tier (or plain) on-demand rate: what the minimum charge uses.
    pub fn first_rate(&self) -> Option<Decimal> {
        match self.tiers.first() {
            Some(t) => Some(t.rate),
            None => self.rate_per_hour,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Position in the price book's `[[reservations]]` (orders lines of equal keys).
    pub index: usize,
    pub account: String,
    pub sku: String,
    pub quantity: Decimal,
    pub from: i64,
    pub to: i64,
    pub rate_per_hour: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceBook {
    pub currency: String,
    pub timezone: Tz,
    pub effective_from: Option<Timestamp>,
    pub skus: BTreeMap<String, Sku>,
    pub offpeak: Vec<OffpeakWindow>,
    /// Per dest: graduated tiers with bounds in GB and rates per GB.
    pub egress: BTreeMap<String, Vec<Tier>>,
    pub tax_rate: Decimal,
    pub reservations: Vec<Reservation>,
    /// Per account: summed discount percent.
    pub discounts: BTreeMap<String, Decimal>,
    /// Per account: summed credits.
    pub credits: BTreeMap<String, Decimal>,
}

impl PriceBook {
    pub fn from_toml(text: &str) -> Result<PriceBook> {
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| PriceBookError::Syntax(e.to_string().trim().into()))?;
        parse(&table)
    }

    /// Accounts named by account terms (reservations, discounts, credits).
    pub fn accounts(&self) -> BTreeSet<&str> {
        let mut a: BTreeSet<&str> = self
            .reservations
            .iter()
            .map(|r| r.account.as_str())
            .collect();
        a.extend(self.discounts.keys().map(String::as_str));
        a.extend(self.credits.keys().map(String::as_str));
        a
    }

    pub fn discount_percent(&self, account: &str) -> Decimal {
        self.discounts.get(account).copied().unwrap_or_default()
    }

    /// Whether this version rates a period starting at `period_start` (Unix seconds): its
    /// `effective_from` is at or before that instant, compared exactly (a version effective at
    /// `00:00:00.5` does not rate the period starting at `00:00:00`).
    pub fn applies_to_period_starting(&self, period_start: i64) -> bool {
        self.effective_from
            .is_none_or(|t| t <= Timestamp::from_secs(period_start))
    }

    pub fn credit_total(&self, account: &str) -> Decimal {
        self.credits.get(account).copied().unwrap_or_default()
    }
}

// ---- walking the TOML tree -------------------------------------------------------------

fn quote_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        quote_key(key)
    } else {
        format!("{path}.{}", quote_key(key))
    }
}

fn invalid<T>(key: &str, value: &Value, message: impl Into<String>) -> Result<T> {
    let mut shown = value.to_string();
    if shown.len() > 80 {
        shown = format!("{}...", shown.chars().take(77).collect::<String>());
    }
    Err(PriceBookError::Invalid {
        key: key.to_string(),
        value: shown,
        message: message.into(),
    })
}

fn missing<T>(key: &str, message: impl Into<String>) -> Result<T> {
    Err(PriceBookError::Missing {
        key: key.to_string(),
        message: message.into(),
    })
}

fn only_keys(t: &Table, path: &str, allowed: &[&str]) -> Result<()> {
    for (k, v) in t {
        if !allowed.contains(&k.as_str()) {
            return invalid(
                &join(path, k),
                v,
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            );
        }
    }
    Ok(())
}

fn as_table<'a>(v: &'a Value, key: &str) -> Result<&'a Table> {
    v.as_table()
        .map_or_else(|| invalid(key, v, "must be a table"), Ok)
}

fn as_array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>> {
    v.as_array()
        .map_or_else(|| invalid(key, v, "must be an array"), Ok)
}

fn string<'a>(t: &'a Table, path: &str, key: &str) -> Result<Option<&'a str>> {
    let p = join(path, key);
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if s.is_empty() => {
            invalid(&p, &Value::String(s.clone()), "must not be empty")
        }
        Some(Value::String(s)) if s.len() > MAX_STRING_BYTES => invalid(
            &p,
            &Value::String(s.clone()),
            format!("longer than {MAX_STRING_BYTES} bytes"),
        ),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => invalid(&p, v, "must be a string"),
    }
}

fn required_string<'a>(t: &'a Table, path: &str, key: &str) -> Result<&'a str> {
    string(t, path, key)?.map_or_else(|| missing(&join(path, key), "is required"), Ok)
}

/// A decimal: a string (`"24.00"`) or a TOML integer; never a float.
fn decimal(t: &Table, path: &str, key: &str) -> Result<Option<Decimal>> {
    let p = join(path, key);
    match t.get(key) {
        None => Ok(None),
        Some(v @ Value::String(s)) => match crate::decimal::parse(s) {
            Ok(d) => Ok(Some(d)),
            Err(e) => invalid(&p, v, e.to_string()),
        },
        Some(Value::Integer(i)) => Ok(Some(Decimal::from(*i))),
        Some(v @ Value::Float(_)) => invalid(
            &p,
            v,
            "floats are not accepted (they are inexact): write the number as a string, e.g. \"0.5\"",
        ),
        Some(v) => invalid(&p, v, "must be a decimal string such as \"24.00\""),
    }
}

fn bounded(
    t: &Table,
    path: &str,
    key: &str,
    min: Decimal,
    min_inclusive: bool,
    max: Decimal,
) -> Result<Option<Decimal>> {
    let Some(d) = decimal(t, path, key)? else {
        return Ok(None);
    };
    let low_ok = if min_inclusive { d >= min } else { d > min };
    if !low_ok || d > max {
        let lo = if min_inclusive { "[" } else { "(" };
        return invalid(
            &join(path, key),
            &t[key],
            format!("must be in {lo}{min}, {max}]"),
        );
    }
    Ok(Some(d))
}

fn rate(t: &Table, path: &str, key: &str) -> Result<Option<Decimal>> {
    bounded(t, path, key, Decimal::ZERO, true, MAX_RATE)
}

fn required<T>(v: Option<T>, path: &str, key: &str) -> Result<T> {
    v.map_or_else(|| missing(&join(path, key), "is required"), Ok)
}

fn instant(t: &Table, path: &str, key: &str) -> Result<Option<Timestamp>> {
    let p = join(path, key);
    let text = match t.get(key) {
        None => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Datetime(d)) => d.to_string(),
        Some(v) => {
            return invalid(
                &p,
                v,
                "must be an RFC 3339 time such as \"2026-11-01T00:00:00+08:00\"",
            );
        }
    };
    match Timestamp::parse_rfc3339(&text) {
        Some(ts) => Ok(Some(ts)),
        None => invalid(
            &p,
            &t[key],
            "is not an RFC 3339 time with an offset, such as \"2026-11-01T00:00:00+08:00\"",
        ),
    }
}

fn time_of_day(t: &Table, path: &str, key: &str, allow_24: bool) -> Result<u32> {
    let p = join(path, key);
    let v = t
        .get(key)
        .map_or_else(|| missing(&p, "is required (\"HH:MM\")"), Ok)?;
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Datetime(d) => d.to_string(),
        _ => return invalid(&p, v, "must be a local time of day \"HH:MM\""),
    };
    let parts: Vec<&str> = text.split(':').collect();
    let num = |s: &str| {
        (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let parsed = match parts.as_slice() {
        [h, m] => num(h).zip(num(m)).map(|(h, m)| (h, m, 0)),
        [h, m, s] => num(h).zip(num(m)).zip(num(s)).map(|((h, m), s)| (h, m, s)),
        _ => None,
    };
    match parsed {
        Some((24, 0, 0)) if allow_24 => Ok(86_400),
        Some((h, m, s)) if h < 24 && m < 60 && s < 60 => Ok(h * 3600 + m * 60 + s),
        _ => invalid(
            &p,
            v,
            "must be a local time of day \"HH:MM\" (00:00 to 23:59, or 24:00 for `to`)",
        ),
    }
}

// ---- sections ---------------------------------------------------------------------------

fn parse(root: &Table) -> Result<PriceBook> {
    only_keys(
        root,
        "",
        &[
            "currency",
            "timezone",
            "effective_from",
            "skus",
            "offpeak",
            "egress",
            "tax",
            "reservations",
            "discounts",
            "credits",
        ],
    )?;
    let currency = required_string(root, "", "currency")?.to_string();
    let timezone = match string(root, "", "timezone")? {
        None => Tz::UTC,
        Some(name) => Tz::from_str(name).or_else(|_| {
            invalid(
                "timezone",
                &root["timezone"],
                "unknown timezone: use an IANA name such as \"Asia/Shanghai\"",
            )
        })?,
    };
    let effective_from = instant(root, "", "effective_from")?;
    let skus = parse_skus(root)?;
    let offpeak = parse_offpeak(root, &skus)?;
    let egress = parse_egress(root)?;
    let tax_rate = match root.get("tax") {
        None => Decimal::ZERO,
        Some(v) => {
            let t = as_table(v, "tax")?;
            only_keys(t, "tax", &["rate"])?;
            let r = bounded(t, "tax", "rate", Decimal::ZERO, true, Decimal::ONE)?;
            required(r, "tax", "rate")?
        }
    };
    let reservations = parse_reservations(root, &skus)?;
    let discounts =
        parse_account_amounts(root, "discounts", "percent", Decimal::ONE_HUNDRED, false)?;
    for (account, total) in &discounts {
        if *total > Decimal::ONE_HUNDRED {
            return invalid(
                "discounts",
                &Value::String(account.clone()),
                format!("the discounts of this account add up to {total} percent, over 100"),
            );
        }
    }
    let credits = parse_account_amounts(root, "credits", "amount", MAX_CREDIT, true)?;
    Ok(PriceBook {
        currency,
        timezone,
        effective_from,
        skus,
        offpeak,
        egress,
        tax_rate,
        reservations,
        discounts,
        credits,
    })
}

/// Tiers with `bound_key` (`up_to_hours` or `up_to_gb`), bounds multiplied by `scale`.
fn parse_tiers(
    v: &Value,
    path: &str,
    bound_key: &str,
    rate_key: &str,
    scale: Decimal,
) -> Result<Vec<Tier>> {
    let arr = as_array(v, path)?;
    if arr.is_empty() {
        return invalid(path, v, "needs at least one tier");
    }
    if arr.len() > MAX_TIERS {
        return invalid(path, v, format!("more than {MAX_TIERS} tiers"));
    }
    let mut tiers = Vec::with_capacity(arr.len());
    let mut previous: Option<Decimal> = None;
    for (i, tv) in arr.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let t = as_table(tv, &p)?;
        only_keys(t, &p, &[bound_key, rate_key])?;
        let bound = decimal(t, &p, bound_key)?;
        let last = i + 1 == arr.len();
        match bound {
            None if !last => {
                return missing(
                    &join(&p, bound_key),
                    "is required on every tier but the last",
                );
            }
            Some(b) if b <= Decimal::ZERO => {
                return invalid(&join(&p, bound_key), &t[bound_key], "must be positive");
            }
            Some(b) if previous.is_some_and(|prev| b <= prev) => {
                return invalid(
                    &join(&p, bound_key),
                    &t[bound_key],
                    format!(
                        "tier bounds must increase (the previous tier ends at {})",
                        previous.unwrap_or_default()
                    ),
                );
            }
            _ => {}
        }
        if bound.is_some_and(|b| b > MAX_RATE) {
            return invalid(
                &join(&p, bound_key),
                &t[bound_key],
                format!("must be at most {MAX_RATE}"),
            );
        }
        previous = bound.or(previous);
        let r = required(rate(t, &p, rate_key)?, &p, rate_key)?;
        tiers.push(Tier {
            up_to: bound.map(|b| b * scale),
            rate: r,
        });
    }
    Ok(tiers)
}

fn parse_skus(root: &Table) -> Result<BTreeMap<String, Sku>> {
    let mut skus = BTreeMap::new();
    let Some(v) = root.get("skus") else {
        return Ok(skus);
    };
    for (name, sv) in as_table(v, "skus")? {
        let path = join("skus", name);
        if name.len() > MAX_STRING_BYTES {
            return invalid(
                &path,
                sv,
                format!("sku names are at most {MAX_STRING_BYTES} bytes"),
            );
        }
        let t = as_table(sv, &path)?;
        only_keys(
            t,
            &path,
            &[
                "rate_per_hour",
                "spot_rate_per_hour",
                "minimum_seconds",
                "tier_mode",
                "tiers",
            ],
        )?;
        let rate_per_hour = rate(t, &path, "rate_per_hour")?;
        let spot_rate_per_hour = rate(t, &path, "spot_rate_per_hour")?;
        let minimum_seconds = match t.get("minimum_seconds") {
            None => None,
            Some(Value::Integer(n)) if (1..=MAX_MINIMUM_SECONDS).contains(n) => Some(*n),
            Some(v) => {
                return invalid(
                    &join(&path, "minimum_seconds"),
                    v,
                    format!("must be a whole number of seconds from 1 to {MAX_MINIMUM_SECONDS}"),
                );
            }
        };
        let tier_mode = match string(t, &path, "tier_mode")? {
            None | Some("graduated") => TierMode::Graduated,
            Some("volume") => TierMode::Volume,
            Some(_) => {
                return invalid(
                    &join(&path, "tier_mode"),
                    &t["tier_mode"],
                    "must be \"graduated\" or \"volume\"",
                );
            }
        };
        let tiers = match t.get("tiers") {
            None => Vec::new(),
            Some(tv) => parse_tiers(
                tv,
                &join(&path, "tiers"),
                "up_to_hours",
                "rate_per_hour",
                Decimal::from(3600),
            )?,
        };
        let sku = Sku {
            rate_per_hour,
            spot_rate_per_hour,
            minimum_seconds,
            tier_mode,
            tiers,
        };
        if sku.on_demand_tiers().is_none() && sku.spot_rate_per_hour.is_none() {
            return missing(
                &path,
                "an sku needs rate_per_hour, tiers or spot_rate_per_hour",
            );
        }
        if sku.minimum_seconds.is_some() && sku.first_rate().is_none() {
            return missing(
                &join(&path, "rate_per_hour"),
                "minimum_seconds needs an on-demand rate (rate_per_hour or tiers)",
            );
        }
        skus.insert(name.clone(), sku);
    }
    Ok(skus)
}

fn parse_offpeak(root: &Table, skus: &BTreeMap<String, Sku>) -> Result<Vec<OffpeakWindow>> {
    let Some(v) = root.get("offpeak") else {
        return Ok(Vec::new());
    };
    let arr = as_array(v, "offpeak")?;
    if arr.len() > MAX_OFFPEAK_WINDOWS {
        return invalid(
            "offpeak",
            v,
            format!("more than {MAX_OFFPEAK_WINDOWS} windows"),
        );
    }
    let mut windows = Vec::new();
    for (i, wv) in arr.iter().enumerate() {
        let path = format!("offpeak[{i}]");
        let t = as_table(wv, &path)?;
        only_keys(t, &path, &["from", "to", "days", "multiplier", "skus"])?;
        let from_seconds = time_of_day(t, &path, "from", false)?;
        let to_seconds = time_of_day(t, &path, "to", true)?;
        if from_seconds == to_seconds {
            return invalid(
                &join(&path, "to"),
                &t["to"],
                "must differ from `from` (a window of zero length; use \"00:00\" to \"24:00\" for a whole day)",
            );
        }
        let days = match t.get("days") {
            None => ALL_DAYS,
            Some(dv) => {
                let dp = join(&path, "days");
                let list = as_array(dv, &dp)?;
                if list.is_empty() {
                    return invalid(
                        &dp,
                        dv,
                        "must name at least one day (omit it for every day)",
                    );
                }
                let mut bits = 0u8;
                for (j, d) in list.iter().enumerate() {
                    match d
                        .as_str()
                        .and_then(|s| WEEKDAYS.iter().position(|w| *w == s))
                    {
                        Some(k) => bits |= 1 << k,
                        None => {
                            return invalid(
                                &format!("{dp}[{j}]"),
                                d,
                                "must be one of mon, tue, wed, thu, fri, sat, sun",
                            );
                        }
                    }
                }
                bits
            }
        };
        let multiplier = bounded(t, &path, "multiplier", Decimal::ZERO, true, MAX_MULTIPLIER)?;
        let multiplier = required(multiplier, &path, "multiplier")?;
        let window_skus = match t.get("skus") {
            None => None,
            Some(sv) => {
                let sp = join(&path, "skus");
                let list = as_array(sv, &sp)?;
                let mut names = Vec::new();
                for (j, s) in list.iter().enumerate() {
                    match s.as_str() {
                        Some(name) if skus.contains_key(name) => names.push(name.to_string()),
                        Some(_) => {
                            return invalid(
                                &format!("{sp}[{j}]"),
                                s,
                                "unknown sku: not defined under [skus]",
                            );
                        }
                        None => return invalid(&format!("{sp}[{j}]"), s, "must be a string"),
                    }
                }
                Some(names)
            }
        };
        windows.push(OffpeakWindow {
            from_seconds,
            to_seconds,
            days,
            multiplier,
            skus: window_skus,
        });
    }
    Ok(windows)
}

fn parse_egress(root: &Table) -> Result<BTreeMap<String, Vec<Tier>>> {
    let mut egress = BTreeMap::new();
    let Some(v) = root.get("egress") else {
        return Ok(egress);
    };
    for (dest, dv) in as_table(v, "egress")? {
        let path = join("egress", dest);
        let t = as_table(dv, &path)?;
        only_keys(t, &path, &["tiers", "rate_per_gb"])?;
        let tiers = match (t.get("tiers"), rate(t, &path, "rate_per_gb")?) {
            (Some(tv), None) => parse_tiers(
                tv,
                &join(&path, "tiers"),
                "up_to_gb",
                "rate_per_gb",
                Decimal::ONE,
            )?,
            (None, Some(r)) => vec![Tier {
                up_to: None,
                rate: r,
            }],
            (Some(_), Some(_)) => {
                return invalid(
                    &join(&path, "rate_per_gb"),
                    &t["rate_per_gb"],
                    "give either tiers or rate_per_gb, not both",
                );
            }
            (None, None) => return missing(&path, "needs tiers or rate_per_gb"),
        };
        egress.insert(dest.clone(), tiers);
    }
    Ok(egress)
}

fn entries<'a>(root: &'a Table, section: &str) -> Result<Vec<(String, &'a Table)>> {
    let Some(v) = root.get(section) else {
        return Ok(Vec::new());
    };
    as_array(v, section)?
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let path = format!("{section}[{i}]");
            let t = as_table(e, &path)?;
            Ok((path, t))
        })
        .collect()
}

fn parse_reservations(root: &Table, skus: &BTreeMap<String, Sku>) -> Result<Vec<Reservation>> {
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

fn parse_account_amounts(
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
        if money && let Err(e) = crate::decimal::check_money(amount) {
            return invalid(&join(&path, key), &t[key], e.to_string());
        }
        *out.entry(account).or_default() += amount;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100-80g"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"
minimum_seconds = 60
tier_mode = "graduated"
tiers = [
  { up_to_hours = 100,  rate_per_hour = "24.00" },
  { up_to_hours = 1000, rate_per_hour = "21.00" },
  { rate_per_hour = "18.00" },
]

[[offpeak]]
from = "00:00"
to = "08:00"
days = ["mon","tue","wed","thu","fri","sat","sun"]
multiplier = "0.70"
skus = ["gpu.h100-80g"]

[egress.internet]
tiers = [ { up_to_gb = 100, rate_per_gb = "0.00" }, { rate_per_gb = "0.50" } ]

[tax]
rate = "0.06"

[[reservations]]
account = "acme"
sku = "gpu.h100-80g"
quantity = "8"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
rate_per_hour = "15.00"

[[discounts]]
account = "acme"
percent = "30"

[[credits]]
account = "acme"
amount = "500.00"
"#;

    fn err(patch: (&str, &str)) -> PriceBookError {
        let text = BASE.replacen(patch.0, patch.1, 1);
        assert_ne!(text, BASE, "patch {:?} did not apply", patch.0);
        PriceBook::from_toml(&text).expect_err(patch.1)
    }

    #[test]
    fn parses_the_documented_example() {
        let pb = PriceBook::from_toml(BASE).unwrap();
        assert_eq!(pb.currency, "CNY");
        assert_eq!(pb.timezone, chrono_tz::Asia::Shanghai);
        let sku = &pb.skus["gpu.h100-80g"];
        assert_eq!(sku.tiers.len(), 3);
        assert_eq!(sku.tiers[1].up_to, Some(Decimal::from(3_600_000)));
        assert_eq!(sku.minimum_seconds, Some(60));
        assert_eq!(pb.offpeak[0].to_seconds, 8 * 3600);
        assert_eq!(pb.reservations[0].to - pb.reservations[0].from, 30 * 86_400);
        assert_eq!(pb.discount_percent("acme"), Decimal::from(30));
        assert_eq!(pb.credit_total("acme"), Decimal::from(500));
        assert_eq!(pb.accounts().into_iter().collect::<Vec<_>>(), vec!["acme"]);
    }

    #[test]
    fn errors_name_the_offending_key_and_value() {
        let cases = [
            (
                ("skus = [\"gpu.h100-80g\"]", "skus = [\"gpu.a100\"]"),
                "offpeak[0].skus[0]",
                "unknown sku",
            ),
            (
                ("up_to_hours = 1000", "up_to_hours = 50"),
                "skus.\"gpu.h100-80g\".tiers[1].up_to_hours",
                "must increase",
            ),
            (
                ("Asia/Shanghai", "Asia/Atlantis"),
                "timezone",
                "unknown timezone",
            ),
            (
                (
                    "rate_per_hour = \"24.00\"\nspot",
                    "rate_per_hour = \"-1\"\nspot",
                ),
                "skus.\"gpu.h100-80g\".rate_per_hour",
                "must be in",
            ),
            (
                ("to = \"08:00\"", "to = \"00:00\""),
                "offpeak[0].to",
                "must differ",
            ),
            (
                ("up_to_hours = 100,", "up_to_hours = 100.5,"),
                "skus.\"gpu.h100-80g\".tiers[0].up_to_hours",
                "floats are not accepted",
            ),
            (
                ("multiplier = \"0.70\"", "multiplier = \"lots\""),
                "offpeak[0].multiplier",
                "not a decimal",
            ),
            (
                ("days = [\"mon\"", "days = [\"monday\""),
                "offpeak[0].days[0]",
                "one of mon",
            ),
            (
                ("sku = \"gpu.h100-80g\"", "sku = \"gpu.b200\""),
                "reservations[0].sku",
                "unknown sku",
            ),
            (
                (
                    "to = \"2026-12-01T00:00:00+08:00\"",
                    "to = \"2026-10-01T00:00:00+08:00\"",
                ),
                "reservations[0].to",
                "after",
            ),
            (
                ("percent = \"30\"", "percent = \"130\""),
                "discounts[0].percent",
                "must be in",
            ),
            (
                ("rate = \"0.06\"", "rat = \"0.06\""),
                "tax.rat",
                "unknown key",
            ),
            (
                ("tier_mode = \"graduated\"", "tier_mode = \"stepped\""),
                "skus.\"gpu.h100-80g\".tier_mode",
                "graduated",
            ),
            (
                ("from = \"00:00\"", "from = \"25:00\""),
                "offpeak[0].from",
                "time of day",
            ),
            (
                ("minimum_seconds = 60", "minimum_seconds = -5"),
                "skus.\"gpu.h100-80g\".minimum_seconds",
                "whole number",
            ),
            (
                ("{ up_to_gb = 100,", "{ up_to_gb = -100,"),
                "egress.internet.tiers[0].up_to_gb",
                "positive",
            ),
            (("currency = \"CNY\"\n", "\n"), "currency", "required"),
        ];
        for ((from, to), key, message) in cases {
            let e = err((from, to));
            assert_eq!(e.key(), key, "{e}");
            assert!(e.to_string().contains(message), "{e}");
        }
    }

    #[test]
    fn invalid_toml_is_a_syntax_error() {
        assert!(matches!(
            PriceBook::from_toml("currency = "),
            Err(PriceBookError::Syntax(_))
        ));
    }

    #[test]
    fn a_middle_tier_without_bound_is_an_error() {
        let e = err((
            "{ up_to_hours = 1000, rate_per_hour = \"21.00\" }",
            "{ rate_per_hour = \"21.00\" }",
        ));
        assert_eq!(e.key(), "skus.\"gpu.h100-80g\".tiers[1].up_to_hours");
    }

    #[test]
    fn midnight_to_midnight_and_24_00() {
        let pb =
            PriceBook::from_toml(&BASE.replacen("to = \"08:00\"", "to = \"24:00\"", 1)).unwrap();
        assert_eq!(pb.offpeak[0].to_seconds, 86_400);
    }
}
