//! Parsing the account terms of a price book (`[[reservations]]`, `[[discounts]]`,
//! `[[credits]]`, `[[packages]]`, `[[subscriptions]]`, `[[charges]]`, `[sla]`): every error
//! names the key and the value.

use super::model::{Reservation, Result, Sku};
use super::regions::Pricing;
use super::terms::{
    Charge, Credit, Cycle, Discount, Package, Refund, Sla, Subscription, auto_renew_cycles,
};
use super::walk::{
    as_array, as_table, bounded, entries, instant, invalid, join, missing, only_keys, rate,
    required, required_string, string,
};
use crate::common::limits::{
    DEFAULT_ATTACH_SECONDS, MAX_ATTACH_SECONDS, MAX_COMPENSATION_MULTIPLIER, MAX_CREDIT,
    MAX_PACKAGE_HOURS, MAX_RESERVED_QUANTITY, MAX_SUBSCRIPTION_CYCLES, MAX_TERM_PRICE,
};
use crate::pricing::invoice::Component;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use toml::{Table, Value};

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

/// The quantity a reservation or a subscription reserves: above 0, at most
/// [`MAX_RESERVED_QUANTITY`].
fn reserved_quantity(t: &Table, path: &str) -> Result<Decimal> {
    let quantity = bounded(
        t,
        path,
        "quantity",
        Decimal::ZERO,
        false,
        MAX_RESERVED_QUANTITY,
    )?;
    required(quantity, path, "quantity")
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

/// Parses each `[[kind]]` entry in order with `parse`, after what every account term checks
/// first: its keys (only `keys`), its `region` and its `account`. `parse` is handed what every
/// account term reads first: the entry's position, its path (`credits[2]`), its table, its
/// region with that region's skus, and its account.
fn each_term<'t, 'a, T>(
    root: &'t Table,
    kind: &str,
    keys: &[&str],
    pricing: &Pricing<'a>,
    mut parse: impl FnMut(
        usize,
        String,
        &'t Table,
        Option<String>,
        &'a BTreeMap<String, Sku>,
        String,
    ) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for (index, (path, t)) in entries(root, kind)?.into_iter().enumerate() {
        only_keys(t, &path, keys)?;
        let (region, skus) = pricing.region_of(t, &path)?;
        let account = required_string(t, &path, "account")?.to_string();
        out.push(parse(index, path, t, region, skus, account)?);
    }
    Ok(out)
}

pub(super) fn parse_packages(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Package>> {
    let mut seen = BTreeSet::new();
    each_term(
        root,
        "packages",
        &[
            "account", "id", "sku", "hours", "from", "to", "price", "region",
        ],
        pricing,
        |index, path, t, region, skus, account| {
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
            Ok(Package {
                index,
                account,
                id,
                sku,
                unit_seconds: hours * Decimal::from(3600),
                from,
                to,
                price,
                region,
            })
        },
    )
}

pub(super) fn parse_subscriptions(
    root: &Table,
    pricing: &Pricing<'_>,
) -> Result<Vec<Subscription>> {
    let mut seen = BTreeSet::new();
    each_term(
        root,
        "subscriptions",
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
        pricing,
        |index, path, t, region, skus, account| {
            let id = required_string(t, &path, "id")?.to_string();
            unique_id(&mut seen, t, &path, &account, &id)?;
            let sku = on_demand_sku(t, &path, skus, "a subscription's sku")?;
            let quantity = reserved_quantity(t, &path)?;
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
            Ok(Subscription {
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
            })
        },
    )
}

pub(super) fn parse_credits(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Credit>> {
    let mut seen = BTreeSet::new();
    each_term(
        root,
        "credits",
        &["account", "amount", "id", "from", "to", "region"],
        pricing,
        |index, path, t, region, _, account| {
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
            Ok(Credit {
                index,
                account,
                id,
                amount,
                from,
                to,
                region,
            })
        },
    )
}

pub(super) fn parse_charges(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Charge>> {
    let mut seen = BTreeSet::new();
    each_term(
        root,
        "charges",
        &["account", "id", "description", "amount", "at", "region"],
        pricing,
        |index, path, t, region, _, account| {
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
            Ok(Charge {
                index,
                account,
                id,
                description,
                amount,
                at,
                region,
            })
        },
    )
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
    each_term(
        root,
        "reservations",
        &[
            "account",
            "sku",
            "quantity",
            "from",
            "to",
            "rate_per_hour",
            "region",
        ],
        pricing,
        |index, path, t, region, skus, account| {
            let sku = on_demand_sku(t, &path, skus, "a reserved sku")?;
            let quantity = reserved_quantity(t, &path)?;
            let from = whole_second(t, &path, "from")?;
            let to = whole_second(t, &path, "to")?;
            if from >= to {
                return invalid(&join(&path, "to"), &t["to"], "must be after `from`");
            }
            let rate_per_hour = required(rate(t, &path, "rate_per_hour")?, &path, "rate_per_hour")?;
            Ok(Reservation {
                index,
                account,
                sku,
                quantity,
                from,
                to,
                rate_per_hour,
                region,
            })
        },
    )
}

pub(super) fn parse_discounts(root: &Table, pricing: &Pricing<'_>) -> Result<Vec<Discount>> {
    let mut seen = BTreeSet::new();
    each_term(
        root,
        "discounts",
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
        pricing,
        |index, path, t, region, skus, account| {
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
            Ok(Discount {
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
            })
        },
    )
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
