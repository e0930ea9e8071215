//! What a customer holds at an instant (issue 10, `GET /v1/balance`): packages with their
//! remaining unit-seconds, credits with what is left of them, subscriptions with their current
//! cycle. Pure: the instant, the book, the ledger and what issued invoices did are passed in.
//!
//! A package's remaining balance is its `hours x 3600` less what the rating's own package
//! drawing (section 12, [`crate::pricing::ondemand`]) takes from the account's ledger over
//! `[earliest package from, at)`: the same walk as a close, so the figure equals what the next
//! invoices will see, whether or not the periods in between are closed.

use crate::finance::credits::CreditPool;
use crate::finance::term_changes::started_cycles;
use crate::ledger::AccountLedger;
use crate::pricing::invoice::Component;
use crate::pricing::period::Period;
use crate::pricing::pricebook::PriceBook;
use crate::pricing::rating::{RatingContext, RatingError, account_lines};
use crate::pricing::subscriptions::cycle_bounds;
use crate::rental::platform::Platform;
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageBalance {
    pub id: String,
    pub sku: String,
    /// Unit-seconds left at the instant.
    pub remaining_unit_seconds: Decimal,
    /// Unix seconds: usable for seconds in `[from, to)`. Shown RFC 3339, like every
    /// instant of the API (issue 24.13).
    #[serde(serialize_with = "rfc3339")]
    pub from: i64,
    #[serde(serialize_with = "rfc3339")]
    pub to: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreditBalance {
    /// `None` for a price book credit without `id`.
    pub id: Option<String>,
    pub amount: Decimal,
    pub remaining: Decimal,
    /// Unix seconds, shown RFC 3339.
    #[serde(serialize_with = "rfc3339_opt")]
    pub from: Option<i64>,
    #[serde(serialize_with = "rfc3339_opt")]
    pub to: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubscriptionStatus {
    pub id: String,
    pub sku: String,
    /// The cycle holding the instant (None: not started yet, or over).
    pub current_cycle: Option<u32>,
    /// `[start, end)` of that cycle, Unix seconds, shown RFC 3339.
    #[serde(serialize_with = "rfc3339_opt")]
    pub cycle_start: Option<i64>,
    #[serde(serialize_with = "rfc3339_opt")]
    pub cycle_end: Option<i64>,
    /// Cycles after the current one (all of them before the start, none after the end).
    pub cycles_left: u32,
    pub cycles: u32,
}

/// Unix seconds as the API writes instants: `2026-11-01T00:00:00Z`.
fn rfc3339<S: serde::Serializer>(secs: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::common::timestamp::format_secs(*secs))
}

fn rfc3339_opt<S: serde::Serializer>(secs: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match secs {
        Some(v) => rfc3339(v, s),
        None => s.serialize_none(),
    }
}

/// The account's packages at `at` (Unix seconds), in the book's order.
pub fn package_balances(
    book: &PriceBook,
    account: &str,
    ledger: Option<&AccountLedger>,
    platform: &Platform,
    at: i64,
) -> Result<Vec<PackageBalance>, RatingError> {
    let mine: Vec<_> = book
        .packages
        .iter()
        .filter(|p| p.account == account)
        .collect();
    let mut used: BTreeMap<&str, Decimal> = BTreeMap::new();
    let start = mine.iter().map(|p| p.from).min();
    if let Some(start) = start.filter(|&s| s < at) {
        let period = Period {
            label: String::new(),
            start,
            end: at,
        };
        let ctx = RatingContext::with_platform(book, period, platform);
        let lines = account_lines(&ctx, account, ledger)?;
        for l in lines.lines {
            if l.component == Component::PackageUsage
                && let Some(id) = &l.package
                && let Some(p) = mine.iter().find(|p| &p.id == id)
            {
                *used.entry(p.id.as_str()).or_default() += l.quantity;
            }
        }
    }
    Ok(mine
        .iter()
        .map(|p| PackageBalance {
            id: p.id.clone(),
            sku: p.sku.clone(),
            remaining_unit_seconds: p.unit_seconds
                - used.get(p.id.as_str()).copied().unwrap_or_default(),
            from: p.from,
            to: p.to,
        })
        .collect())
}

/// The account's credits after its issued invoices (`issued`: period, compensation earned,
/// credit consumed), in the book's order, and the SLA compensation not yet consumed.
pub fn credit_balances(
    book: &PriceBook,
    account: &str,
    issued: &[(Period, crate::finance::credits::Contribution)],
) -> (Vec<CreditBalance>, Decimal) {
    let pool = CreditPool::after_invoices(book, account, issued);
    let credits = book
        .credit_terms
        .iter()
        .filter(|c| c.account == account)
        .map(|c| CreditBalance {
            id: c.id.clone(),
            amount: c.amount,
            remaining: pool.remaining_of(c.index).unwrap_or(c.amount),
            from: c.from,
            to: c.to,
        })
        .collect();
    (credits, pool.compensation_left())
}

/// The account's subscriptions at `at`, in the book's order.
pub fn subscription_statuses(book: &PriceBook, account: &str, at: i64) -> Vec<SubscriptionStatus> {
    book.subscriptions
        .iter()
        .filter(|s| s.account == account)
        .map(|s| {
            let bounds = cycle_bounds(s, book.timezone);
            let started = started_cycles(s, book.timezone, at);
            let current = (started > 0 && at < bounds[s.cycles as usize]).then(|| started - 1);
            SubscriptionStatus {
                id: s.id.clone(),
                sku: s.sku.clone(),
                current_cycle: current,
                cycle_start: current.map(|k| bounds[k as usize]),
                cycle_end: current.map(|k| bounds[k as usize + 1]),
                cycles_left: s.cycles - started,
                cycles: s.cycles,
            }
        })
        .collect()
}
