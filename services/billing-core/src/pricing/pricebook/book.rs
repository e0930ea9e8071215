//! The parsed price book, [`PriceBook`], and its parser from the TOML tree.

use super::model::{PriceBookError, Reservation, Result, Sku};
use super::terms::{Charge, Credit, Discount, Package, Sla, Subscription};
use super::walk::{
    as_table, bounded, instant, invalid, only_keys, required, required_string, string,
};
use super::{skus, terms};
use crate::common::timestamp::Timestamp;
use crate::pricing::offpeak::OffpeakWindow;
use crate::pricing::tiers::Tier;
use chrono_tz::Tz;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use toml::{Table, Value};

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
    /// Per account: the summed percent of its plain discounts (`P` of section 16).
    pub discounts: BTreeMap<String, Decimal>,
    /// Every discount, in price book order (section 16: scoped, dated and capped ones too).
    pub discount_terms: Vec<Discount>,
    /// Per account: summed credits.
    pub credits: BTreeMap<String, Decimal>,
    /// Every credit, in price book order (section 12: `id`, `from`, `to`).
    pub credit_terms: Vec<Credit>,
    /// Section 10.
    pub sla: Sla,
    /// Section 12.
    pub packages: Vec<Package>,
    /// Section 13.
    pub subscriptions: Vec<Subscription>,
    /// Section 20.
    pub charges: Vec<Charge>,
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
        a.extend(self.discount_terms.iter().map(|d| d.account.as_str()));
        a.extend(self.credits.keys().map(String::as_str));
        a.extend(self.packages.iter().map(|p| p.account.as_str()));
        a.extend(self.subscriptions.iter().map(|s| s.account.as_str()));
        a.extend(self.charges.iter().map(|c| c.account.as_str()));
        a
    }

    /// Sum of the account's credits that apply to the period `[start, end)` (section 12), at
    /// their full amounts (as `gpubill rate` starts them). Equals [`PriceBook::credit_total`]
    /// when no credit has `from` or `to`.
    pub fn credit_total_for(&self, account: &str, start: i64, end: i64) -> Decimal {
        self.credit_terms
            .iter()
            .filter(|c| c.account == account && c.applies_to(start, end))
            .map(|c| c.amount)
            .sum()
    }

    /// Whether the book uses a feature of part 3 (sections 15 to 21): its invoices then name
    /// their region (`null` for home, section 19). Without one, invoices are exactly those of
    /// parts 1 and 2.
    pub fn uses_part3(&self) -> bool {
        !self.charges.is_empty()
            || self.skus.values().any(|s| s.increment_seconds.is_some())
            || self
                .discount_terms
                .iter()
                .any(|d| d.id.is_some() || !d.is_plain())
    }

    /// Section 16: the account's discounts other than plain ones that apply to the period
    /// `[start, end)`, in price book order.
    pub fn scoped_discounts(&self, account: &str, start: i64, end: i64) -> Vec<&Discount> {
        self.discount_terms
            .iter()
            .filter(|d| d.account == account && !d.is_plain() && d.applies_to(start, end))
            .collect()
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
            "sla",
            "packages",
            "subscriptions",
            "charges",
        ],
    )?;
    let currency = required_string(root, "", "currency")?.to_string();
    // An ISO 4217 code (issue 24.6: a NUL inside `currency` was accepted and printed).
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return invalid(
            "currency",
            &root["currency"],
            "must be an ISO 4217 code of three capital letters, such as \"CNY\" or \"USD\"",
        );
    }
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
    let skus = skus::parse_skus(root)?;
    let offpeak = skus::parse_offpeak(root, &skus)?;
    let egress = skus::parse_egress(root)?;
    let tax_rate = match root.get("tax") {
        None => Decimal::ZERO,
        Some(v) => {
            let t = as_table(v, "tax")?;
            only_keys(t, "tax", &["rate"])?;
            let r = bounded(t, "tax", "rate", Decimal::ZERO, true, Decimal::ONE)?;
            required(r, "tax", "rate")?
        }
    };
    let reservations = terms::parse_reservations(root, &skus)?;
    let discount_terms = terms::parse_discounts(root, &skus)?;
    // Per account, `P`: the plain discounts' percents (section 16).
    let mut discounts: BTreeMap<String, Decimal> = BTreeMap::new();
    for d in discount_terms.iter().filter(|d| d.is_plain()) {
        *discounts.entry(d.account.clone()).or_default() += d.percent;
    }
    for (account, total) in &discounts {
        if *total > Decimal::ONE_HUNDRED {
            return invalid(
                "discounts",
                &Value::String(account.clone()),
                format!("the discounts of this account add up to {total} percent, over 100"),
            );
        }
    }
    let credit_terms = terms::parse_credits(root)?;
    let mut credits: BTreeMap<String, Decimal> = BTreeMap::new();
    for c in &credit_terms {
        *credits.entry(c.account.clone()).or_default() += c.amount;
    }
    let sla = terms::parse_sla(root)?;
    let packages = terms::parse_packages(root, &skus)?;
    let subscriptions = terms::parse_subscriptions(root, &skus)?;
    let charges = terms::parse_charges(root)?;
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
        discount_terms,
        credits,
        credit_terms,
        sla,
        packages,
        subscriptions,
        charges,
    })
}
