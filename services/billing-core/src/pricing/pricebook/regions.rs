//! Regions and account settings (billing-semantics.md section 19).
//!
//! ```toml
//! [regions."ap-singapore"]         # the top level of the price book is the home region
//! currency = "USD"
//! timezone = "Asia/Singapore"
//! [regions."ap-singapore".skus."gpu.h100-80g"]
//! rate_per_hour = "3.20"
//!
//! [[accounts]]
//! id = "acme-ml"
//! parent = "acme"                  # section 18: optional, a tree
//! pays = "parent"                  # section 18: "self" (default) or "parent"
//! timezone = "Europe/Berlin"       # the periods of its invoices, in every region
//! ```
//!
//! A region table holds what the top level holds (`currency`, `timezone`, `skus`, `offpeak`,
//! `egress`, `tax`), nothing inherited: `currency` and `timezone` are required, a missing
//! `[tax]` is a rate of 0. Terms name their region with `region` (default home); the skus a
//! term names are the skus of its region.

use super::model::{PriceBookError, Result, Sku};
use super::skus;
use super::walk::{
    as_table, bounded, entries, invalid, join, missing, name_key, only_keys, quote_key, required,
    required_string, string,
};
use crate::pricing::offpeak::OffpeakWindow;
use crate::pricing::tiers::Tier;
use chrono_tz::Tz;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use toml::{Table, Value};

/// What prices usage in one region: the top level of the price book for home, a
/// `[regions."name"]` table for the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub currency: String,
    /// The region's periods and off-peak windows.
    pub timezone: Tz,
    pub skus: BTreeMap<String, Sku>,
    pub offpeak: Vec<OffpeakWindow>,
    pub egress: BTreeMap<String, Vec<Tier>>,
    pub tax_rate: Decimal,
}

/// An `[[accounts]]` entry (sections 18 and 19).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountSettings {
    /// Position in the price book's `[[accounts]]`.
    pub index: usize,
    pub id: String,
    /// Section 18: the account's parent in its organization.
    pub parent: Option<String>,
    /// Section 18: `pays = "parent"` (its parent's payer pays for it); `false` for `"self"`,
    /// the default.
    pub pays_parent: bool,
    /// Section 19: the periods of the account's invoices in every region.
    pub timezone: Option<Tz>,
    /// Issue 27: later places of the account in its organization, each from a period on,
    /// labels strictly increasing (`parent` and `pays` above hold before the first).
    pub moves: Vec<AccountMove>,
}

/// A move of an account (issue 27): from period `from` (`YYYY-MM`) on, its parent is
/// `parent` (None: a root) and `pays_parent` says whether its parent's payer pays for it.
/// An account has one place per period, so a move takes effect at a period's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountMove {
    pub from: String,
    pub parent: Option<String>,
    pub pays_parent: bool,
}

/// Rewrites an error's key to sit under `prefix` (a region's table).
fn prefixed(e: PriceBookError, prefix: &str) -> PriceBookError {
    let fix = |k: String| {
        if k.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match e {
        PriceBookError::Invalid {
            key,
            value,
            message,
        } => PriceBookError::Invalid {
            key: fix(key),
            value,
            message,
        },
        PriceBookError::Missing { key, message } => PriceBookError::Missing {
            key: fix(key),
            message,
        },
        other => other,
    }
}

/// `currency`: required, an ISO 4217 code.
pub(super) fn currency(t: &Table, path: &str) -> Result<String> {
    let currency = required_string(t, path, "currency")?.to_string();
    // An ISO 4217 code (issue 24.6: a NUL inside `currency` was accepted and printed).
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return invalid(
            &join(path, "currency"),
            &t["currency"],
            "must be an ISO 4217 code of three capital letters, such as \"CNY\" or \"USD\"",
        );
    }
    Ok(currency)
}

/// An IANA timezone name at `key`, if given.
pub(super) fn timezone(t: &Table, path: &str, key: &str) -> Result<Option<Tz>> {
    match string(t, path, key)? {
        None => Ok(None),
        Some(name) => Tz::from_str(name).map(Some).or_else(|_| {
            invalid(
                &join(path, key),
                &t[key],
                "unknown timezone: use an IANA name such as \"Asia/Shanghai\"",
            )
        }),
    }
}

/// `[tax]`: `rate` from 0 to 1; missing, 0.
pub(super) fn tax_rate(t: &Table, path: &str) -> Result<Decimal> {
    match t.get("tax") {
        None => Ok(Decimal::ZERO),
        Some(v) => {
            let p = join(path, "tax");
            let tax = as_table(v, &p)?;
            only_keys(tax, &p, &["rate"])?;
            let r = bounded(tax, &p, "rate", Decimal::ZERO, true, Decimal::ONE)?;
            required(r, &p, "rate")
        }
    }
}

/// The pricing of one region from its table (the top level for home, whose `timezone`
/// defaults to UTC; a region's is required).
pub(super) fn parse_pricing(t: &Table, path: &str, home: bool) -> Result<Region> {
    let currency = currency(t, path)?;
    let timezone = match timezone(t, path, "timezone")? {
        Some(tz) => tz,
        None if home => Tz::UTC,
        None => return missing(&join(path, "timezone"), "is required in a region"),
    };
    // The sku, off-peak and egress parsers name keys from the top; a region's sit below it.
    let within = |e: PriceBookError| if home { e } else { prefixed(e, path) };
    let skus = skus::parse_skus(t).map_err(within)?;
    let offpeak = skus::parse_offpeak(t, &skus).map_err(within)?;
    let egress = skus::parse_egress(t).map_err(within)?;
    let tax_rate = tax_rate(t, path)?;
    Ok(Region {
        currency,
        timezone,
        skus,
        offpeak,
        egress,
        tax_rate,
    })
}

/// `[regions."name"]` tables.
pub(super) fn parse_regions(root: &Table) -> Result<BTreeMap<String, Region>> {
    let mut out = BTreeMap::new();
    let Some(v) = root.get("regions") else {
        return Ok(out);
    };
    for (name, rv) in as_table(v, "regions")? {
        let path = join("regions", name);
        name_key(&path, name, rv)?;
        let t = as_table(rv, &path)?;
        only_keys(
            t,
            &path,
            &["currency", "timezone", "skus", "offpeak", "egress", "tax"],
        )?;
        out.insert(name.clone(), parse_pricing(t, &path, false)?);
    }
    Ok(out)
}

/// `[[accounts]]`: `id` (unique), optional `timezone`, section 18's `parent` and `pays`
/// (`"self"`, the default, or `"parent"`), and issue 27's `moves` (`[{from = "YYYY-MM",
/// parent, pays}]`, months strictly increasing). The organization they make is checked by
/// [`super::org::build`], in every period a move starts.
pub(super) fn parse_accounts(root: &Table) -> Result<Vec<AccountSettings>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (path, t)) in entries(root, "accounts")?.into_iter().enumerate() {
        only_keys(t, &path, &["id", "parent", "pays", "timezone", "moves"])?;
        let id = required_string(t, &path, "id")?.to_string();
        if !seen.insert(id.clone()) {
            return invalid(
                &join(&path, "id"),
                &t["id"],
                "another [[accounts]] entry has this id",
            );
        }
        let (parent, pays_parent) = placement(t, &path)?;
        let timezone = timezone(t, &path, "timezone")?;
        let moves = parse_moves(t, &path)?;
        out.push(AccountSettings {
            index,
            id,
            parent,
            pays_parent,
            timezone,
            moves,
        });
    }
    Ok(out)
}

/// `parent` and `pays` of an `[[accounts]]` entry or one of its moves.
fn placement(t: &Table, path: &str) -> Result<(Option<String>, bool)> {
    let parent = string(t, path, "parent")?.map(str::to_string);
    let pays_parent = match string(t, path, "pays")? {
        None | Some("self") => false,
        Some("parent") => true,
        Some(_) => {
            return invalid(
                &join(path, "pays"),
                &t["pays"],
                "must be \"self\" or \"parent\"",
            );
        }
    };
    Ok((parent, pays_parent))
}

/// `moves` of an `[[accounts]]` entry: each from a month on, strictly increasing.
fn parse_moves(t: &Table, path: &str) -> Result<Vec<AccountMove>> {
    let Some(v) = t.get("moves") else {
        return Ok(Vec::new());
    };
    let key = join(path, "moves");
    let mut out: Vec<AccountMove> = Vec::new();
    for (i, m) in super::walk::as_array(v, &key)?.iter().enumerate() {
        let mpath = format!("{key}[{i}]");
        let mt = super::walk::as_table(m, &mpath)?;
        only_keys(mt, &mpath, &["from", "parent", "pays"])?;
        let from = required_string(mt, &mpath, "from")?;
        let label = match crate::pricing::period::Period::month(from, Tz::UTC) {
            Ok(p) if p.label == from => p.label,
            _ => {
                return invalid(
                    &join(&mpath, "from"),
                    &mt["from"],
                    "must be a month \"YYYY-MM\": a move takes effect at the start of a period",
                );
            }
        };
        if let Some(before) = out.last()
            && before.from >= label
        {
            return invalid(
                &join(&mpath, "from"),
                &mt["from"],
                format!(
                    "moves must be in order of months: the move before is from {:?}",
                    before.from
                ),
            );
        }
        let (parent, pays_parent) = placement(mt, &mpath)?;
        out.push(AccountMove {
            from: label,
            parent,
            pays_parent,
        });
    }
    Ok(out)
}

/// The skus a term may name: its region's (section 19).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pricing<'a> {
    pub home: &'a BTreeMap<String, Sku>,
    pub regions: &'a BTreeMap<String, Region>,
}

impl<'a> Pricing<'a> {
    /// A term's `region` (`None`: home) and the skus of that region; an unknown region is an
    /// error naming the key.
    pub fn region_of(
        &self,
        t: &Table,
        path: &str,
    ) -> Result<(Option<String>, &'a BTreeMap<String, Sku>)> {
        match string(t, path, "region")? {
            None => Ok((None, self.home)),
            Some(name) => match self.regions.get(name) {
                Some(r) => Ok((Some(name.to_string()), &r.skus)),
                None => invalid(
                    &join(path, "region"),
                    &Value::String(name.to_string()),
                    format!(
                        "unknown region: not defined as [regions.{}]",
                        quote_key(name)
                    ),
                ),
            },
        }
    }
}
