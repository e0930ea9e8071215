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
    /// Section 17: it renews by itself, cycle after cycle, until an `end`.
    pub auto_renew: bool,
    /// Section 17: when it ends before its cycles do (RFC 3339), if it does.
    #[serde(serialize_with = "rfc3339_opt")]
    pub end: Option<i64>,
    /// Section 17: what ending it inside a cycle gives back: `none` or `prorata`.
    pub refund: &'static str,
    /// When the next cycle starts (and, for a plan that renews, is billed): none when the
    /// current cycle is its last one, or it has not started or is over.
    #[serde(serialize_with = "rfc3339_opt")]
    pub next_cycle_start: Option<i64>,
    /// What ending it at the instant (`end` = now, by command) would refund: with
    /// `refund = "prorata"`, the unused part of the current cycle's price, rounded to the cent
    /// (section 17, [`crate::pricing::subscriptions::prorata_refund`]); else 0.
    pub refund_if_ended_now: Decimal,
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

/// The account's subscriptions at `at`, in the book's order. Cycles are those that start
/// (section 17: none at or after `end`; an auto-renewing plan's up to the horizon), in the
/// book's timezone (for a region's plan, pass the region's book).
pub fn subscription_statuses(book: &PriceBook, account: &str, at: i64) -> Vec<SubscriptionStatus> {
    use crate::pricing::pricebook::Refund;
    use crate::pricing::subscriptions::{prorata_refund, started_bounds_until};
    let tz = book.timezone;
    book.subscriptions
        .iter()
        .filter(|s| s.account == account)
        .map(|s| {
            // The bounds up to the first after `at` (or the last, or the first at `end`).
            let bounds = started_bounds_until(s, tz, at.saturating_add(1));
            let starts = &bounds[..bounds.len() - 1];
            let started = starts.iter().filter(|&&b| b <= at).count();
            let live = started > 0 && at < bounds[started] && s.end.is_none_or(|e| at < e);
            let current = live.then(|| started - 1);
            let cycle_end = current.map(|k| bounds[k + 1]);
            let next = current.and_then(|k| {
                let start = bounds[k + 1];
                (k + 1 < s.cycles as usize && s.end.is_none_or(|e| start < e)).then_some(start)
            });
            let refund_if_ended_now = match (current, s.refund) {
                (Some(_), Refund::Prorata) => {
                    let mut ended = s.clone();
                    ended.end = Some(at);
                    let cut = started_bounds_until(&ended, tz, at.saturating_add(1));
                    prorata_refund(&ended, &cut).map_or(Decimal::ZERO, |r| r.2)
                }
                _ => Decimal::ZERO,
            };
            SubscriptionStatus {
                id: s.id.clone(),
                sku: s.sku.clone(),
                current_cycle: current.map(|k| k as u32),
                cycle_start: current.map(|k| bounds[k]),
                cycle_end,
                cycles_left: s.cycles.saturating_sub(started_cycles(s, tz, at)),
                cycles: s.cycles,
                auto_renew: s.auto_renew,
                end: s.end,
                refund: match s.refund {
                    Refund::None => "none",
                    Refund::Prorata => "prorata",
                },
                next_cycle_start: next,
                refund_if_ended_now,
            }
        })
        .collect()
}
