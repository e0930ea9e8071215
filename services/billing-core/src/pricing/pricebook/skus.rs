//! Skus, their tiers and state rates, off-peak windows and egress tables (sections 3 and 8).

use super::model::{MAX_OFFPEAK_WINDOWS, MAX_TIERS, Result, Sku};
use super::walk::{
    as_array, as_table, bounded, decimal, invalid, join, missing, name_key, only_keys, rate,
    required, string, time_of_day,
};
use crate::common::limits::{
    MAX_INCREMENT_SECONDS, MAX_MINIMUM_SECONDS, MAX_MULTIPLIER, MAX_RATE, MAX_STRING_BYTES,
};
use crate::pricing::offpeak::{ALL_DAYS, OffpeakWindow, WEEKDAYS};
use crate::pricing::tiers::{Tier, TierMode};
use crate::rental::lease::LeaseState;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// Tiers with `bound_key` (`up_to_hours` or `up_to_gb`), bounds multiplied by `scale`.
pub(super) fn parse_tiers(
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

pub(super) fn parse_skus(root: &Table) -> Result<BTreeMap<String, Sku>> {
    let mut skus = BTreeMap::new();
    let Some(v) = root.get("skus") else {
        return Ok(skus);
    };
    for (name, sv) in as_table(v, "skus")? {
        let path = join("skus", name);
        name_key(&path, name, sv)?;
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
                "increment_seconds",
                "tier_mode",
                "tiers",
                "state_rates",
            ],
        )?;
        let rate_per_hour = rate(t, &path, "rate_per_hour")?;
        let spot_rate_per_hour = rate(t, &path, "spot_rate_per_hour")?;
        let minimum_seconds = minimum_seconds(t, &path)?;
        let increment_seconds = increment_seconds(t, &path)?;
        if minimum_seconds.is_some() && increment_seconds.is_some() {
            return invalid(
                &join(&path, "increment_seconds"),
                &t["increment_seconds"],
                "an sku sets increment_seconds or minimum_seconds, never both (section 15)",
            );
        }
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
        let state_rates = parse_state_rates(t, &path)?;
        let sku = Sku {
            rate_per_hour,
            spot_rate_per_hour,
            minimum_seconds,
            increment_seconds,
            tier_mode,
            tiers,
            state_rates,
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
        if sku.increment_seconds.is_some() && sku.first_rate().is_none() {
            return missing(
                &join(&path, "rate_per_hour"),
                "increment_seconds needs an on-demand rate (rate_per_hour or tiers)",
            );
        }
        skus.insert(name.clone(), sku);
    }
    Ok(skus)
}

pub(super) fn parse_offpeak(
    root: &Table,
    skus: &BTreeMap<String, Sku>,
) -> Result<Vec<OffpeakWindow>> {
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

pub(super) fn parse_egress(root: &Table) -> Result<BTreeMap<String, Vec<Tier>>> {
    let mut egress = BTreeMap::new();
    let Some(v) = root.get("egress") else {
        return Ok(egress);
    };
    for (dest, dv) in as_table(v, "egress")? {
        let path = join("egress", dest);
        name_key(&path, dest, dv)?;
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

/// `state_rates = { stopped = "0.20", host_down = "0" }`: per unit-hour (section 8).
fn parse_state_rates(t: &Table, path: &str) -> Result<BTreeMap<LeaseState, Decimal>> {
    let mut out = BTreeMap::new();
    let Some(v) = t.get("state_rates") else {
        return Ok(out);
    };
    let p = join(path, "state_rates");
    let table = as_table(v, &p)?;
    for (name, value) in table {
        let Some(state) = LeaseState::parse(name) else {
            let names: Vec<&str> = LeaseState::ALL.iter().map(|s| s.as_str()).collect();
            return invalid(
                &join(&p, name),
                value,
                format!(
                    "unknown lease state (expected one of: {})",
                    names.join(", ")
                ),
            );
        };
        out.insert(state, required(rate(table, &p, name)?, &p, name)?);
    }
    Ok(out)
}

fn minimum_seconds(t: &Table, path: &str) -> Result<Option<i64>> {
    match t.get("minimum_seconds") {
        None => Ok(None),
        Some(Value::Integer(n)) if (1..=MAX_MINIMUM_SECONDS).contains(n) => Ok(Some(*n)),
        Some(v) => invalid(
            &join(path, "minimum_seconds"),
            v,
            format!("must be a whole number of seconds from 1 to {MAX_MINIMUM_SECONDS}"),
        ),
    }
}

/// Section 15: `increment_seconds`, an integer from 1 to 86,400.
fn increment_seconds(t: &Table, path: &str) -> Result<Option<i64>> {
    match t.get("increment_seconds") {
        None => Ok(None),
        Some(Value::Integer(n)) if (1..=MAX_INCREMENT_SECONDS).contains(n) => Ok(Some(*n)),
        Some(v) => invalid(
            &join(path, "increment_seconds"),
            v,
            format!("must be a whole number of seconds from 1 to {MAX_INCREMENT_SECONDS}"),
        ),
    }
}
