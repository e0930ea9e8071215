//! Rating one account for one period: billing-semantics.md section 4, assembled into an
//! invoice by section 5.
//!
//! Works on segments rather than seconds: for each sku the period is cut wherever usage,
//! reservations or off-peak windows change, so `U`, `R` and `m` are constant over each
//! segment and the walk in time order costs one step per change, not per second. Graduated
//! tiers split a segment's overflow at the exact unit-second where a bound falls.

use crate::egress::{bytes_in, egress_lines, gigabytes};
use crate::event::Class;
use crate::invoice::{Component, Invoice, Line, Terms, Unit};
use crate::ledger::{AccountLedger, Runs};
use crate::meter::Meter;
use crate::minimum::owed_unit_seconds;
use crate::money::{show_quantity, usage_amount};
use crate::offpeak::Schedule;
use crate::period::Period;
use crate::pricebook::{PriceBook, Reservation, Sku};
use crate::reservations::{active_span, commitment_line};
use crate::tiers::{TierMode, split_graduated, volume_tier};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    /// What the account owes for the period could exceed [`MAX_AMOUNT`]: accepted but absurd
    /// magnitudes (rates near the price book's limit times a fleet's worth of unit-seconds).
    /// Refused before any arithmetic could overflow a `Decimal` or lose the 2 minor digits.
    #[error(
        "account {account:?} could owe more than {max} for the period (bound {bound}): refusing to rate absurd magnitudes"
    )]
    AmountTooLarge {
        account: String,
        bound: String,
        max: Decimal,
    },
    #[error("egress of account {account:?} to {dest:?} is too large to rate ({bytes} bytes)")]
    EgressOverflow {
        account: String,
        dest: String,
        bytes: u128,
    },
}

/// Usage that stays in the ledger but cannot be rated (section 3, "Unpriced usage").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unpriced {
    pub account: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    pub quantity: Decimal,
    pub unit: Unit,
    pub why: String,
}

/// An account's invoice and what could not be rated in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rated {
    pub invoice: Invoice,
    pub unpriced: Vec<Unpriced>,
}

/// What rating a period needs besides the ledger, computed once for all accounts.
#[derive(Debug, Clone)]
pub struct RatingContext<'a> {
    pub book: &'a PriceBook,
    pub period: Period,
    schedule: Schedule,
}

impl<'a> RatingContext<'a> {
    pub fn new(book: &'a PriceBook, period: Period) -> Self {
        let schedule = Schedule::new(book.timezone, &book.offpeak, period.start, period.end);
        RatingContext {
            book,
            period,
            schedule,
        }
    }
}

/// Rates `account` (whose ledger may be empty) with `credit_balance` still available.
pub fn rate_account(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: Option<&AccountLedger>,
    credit_balance: Decimal,
) -> Result<Rated, RatingError> {
    let book = ctx.book;
    let period = &ctx.period;
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    let empty = AccountLedger::new();
    let ledger = ledger.unwrap_or(&empty);
    check_magnitude(book, period, account, ledger)?;

    // Keys of the account by (class, sku): order-free grouping.
    let mut by_sku: BTreeMap<(Class, &str), Vec<&Runs>> = BTreeMap::new();
    for (key, runs) in ledger.usage() {
        by_sku.entry((key.class, &key.sku)).or_default().push(runs);
    }
    let reservations: Vec<&Reservation> = book
        .reservations
        .iter()
        .filter(|r| r.account == account)
        .collect();
    let mut on_demand_skus: BTreeSet<&str> = reservations.iter().map(|r| r.sku.as_str()).collect();
    on_demand_skus.extend(
        by_sku
            .keys()
            .filter(|(c, _)| *c == Class::OnDemand)
            .map(|(_, s)| *s),
    );

    for sku_name in on_demand_skus {
        let keys = by_sku
            .get(&(Class::OnDemand, sku_name))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let sku = book.skus.get(sku_name);
        let Some((sku, tiers)) = sku.and_then(|s| s.on_demand_tiers().map(|t| (s, t))) else {
            let used = unit_seconds_in(keys, period);
            if !used.is_zero() {
                unpriced.push(Unpriced {
                    account: account.to_string(),
                    sku: Some(sku_name.to_string()),
                    class: Some(Class::OnDemand),
                    dest: None,
                    quantity: show_quantity(used),
                    unit: Unit::UnitSeconds,
                    why: if sku.is_none() {
                        "sku not in the price book".into()
                    } else {
                        "sku has no on-demand rate".into()
                    },
                });
            }
            continue;
        };
        let res: Vec<&Reservation> = reservations
            .iter()
            .copied()
            .filter(|r| r.sku == sku_name)
            .collect();
        rate_on_demand(ctx, sku_name, sku, &tiers, keys, &res, &mut lines);
        if let (Some(minimum), Some(rate)) = (sku.minimum_seconds, sku.first_rate()) {
            let owed: Decimal = keys
                .iter()
                .filter_map(|r| owed_unit_seconds(r, minimum, period))
                .sum();
            lines.push(Line::usage(
                Component::Minimum,
                sku_name,
                0,
                owed,
                usage_amount(owed, rate, Decimal::ONE),
            ));
        }
    }
    for r in &reservations {
        lines.extend(commitment_line(r, period));
    }

    for ((class, sku_name), keys) in &by_sku {
        if *class != Class::Spot {
            continue;
        }
        let used = unit_seconds_in(keys, period);
        match book.skus.get(*sku_name).and_then(|s| s.spot_rate_per_hour) {
            Some(rate) => lines.push(Line::usage(
                Component::Spot,
                sku_name,
                0,
                used,
                usage_amount(used, rate, Decimal::ONE),
            )),
            None if !used.is_zero() => unpriced.push(Unpriced {
                account: account.to_string(),
                sku: Some(sku_name.to_string()),
                class: Some(Class::Spot),
                dest: None,
                quantity: show_quantity(used),
                unit: Unit::UnitSeconds,
                why: if book.skus.contains_key(*sku_name) {
                    "sku has no spot_rate_per_hour".into()
                } else {
                    "sku not in the price book".into()
                },
            }),
            None => {}
        }
    }

    for (dest, records) in ledger.egress() {
        let bytes = bytes_in(records, period);
        if bytes == 0 {
            continue;
        }
        let gb = gigabytes(bytes).ok_or_else(|| RatingError::EgressOverflow {
            account: account.to_string(),
            dest: dest.clone(),
            bytes,
        })?;
        match book.egress.get(dest) {
            Some(tiers) => lines.extend(egress_lines(dest, tiers, gb)),
            None => unpriced.push(Unpriced {
                account: account.to_string(),
                sku: None,
                class: None,
                dest: Some(dest.clone()),
                quantity: show_quantity(gb),
                unit: Unit::Gb,
                why: "no egress table for this dest".into(),
            }),
        }
    }

    let terms = Terms {
        discount_percent: book.discount_percent(account),
        credit_balance,
        tax_rate: book.tax_rate,
    };
    let invoice = Invoice::assemble(account, &book.currency, period.to_json(), lines, terms);
    Ok(Rated { invoice, unpriced })
}

/// Largest amount an invoice may carry: 10^18 in the currency's major unit. Far beyond any
/// real bill, and small enough that every product and sum of the rating stays exact in a
/// `Decimal` (28 digits) with its 2 minor digits.
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(0xA764_0000, 0x0DE0_B6B3, 0, false, 0);

/// Refuses to rate when an upper bound of what the account could owe for the period exceeds
/// [`MAX_AMOUNT`]. The bound: every unit-second the rules can bill (usage in the period, the
/// minimum charge of every key, every reservation's commitment) at the book's highest rate and
/// multiplier, plus every GB of egress at the highest egress rate. Each line's amount is at
/// most its share of this bound, so when it holds no multiplication or sum below can overflow
/// and every amount keeps its 2 decimals (`Invoice::assert_adds_up` cannot fail).
fn check_magnitude(
    book: &PriceBook,
    period: &Period,
    account: &str,
    ledger: &AccountLedger,
) -> Result<(), RatingError> {
    let too_large = |bound: Option<Decimal>| RatingError::AmountTooLarge {
        account: account.to_string(),
        bound: bound.map_or_else(|| "beyond 7.9e28".to_string(), |b| b.round().to_string()),
        max: MAX_AMOUNT,
    };
    let add = |a: Option<Decimal>, b: Option<Decimal>| a?.checked_add(b?);
    let mut rate = Decimal::ZERO;
    for sku in book.skus.values() {
        let rates = sku.tiers.iter().map(|t| t.rate);
        for r in rates.chain(sku.rate_per_hour).chain(sku.spot_rate_per_hour) {
            rate = rate.max(r);
        }
    }
    let reserved = book.reservations.iter().filter(|r| r.account == account);
    let mut unit_seconds = Some(Decimal::ZERO);
    for r in reserved {
        rate = rate.max(r.rate_per_hour);
        let span = active_span(r, period).map_or(0, |(a, b)| b - a);
        unit_seconds = add(unit_seconds, r.quantity.checked_mul(Decimal::from(span)));
    }
    let multiplier = book
        .offpeak
        .iter()
        .map(|w| w.multiplier)
        .fold(Decimal::ONE, Decimal::max);
    for (key, runs) in ledger.usage() {
        let used = runs
            .clipped(period.start, period.end)
            .map(|r| r.unit_seconds())
            .try_fold(Decimal::ZERO, |a, b| a.checked_add(b));
        unit_seconds = add(unit_seconds, used);
        let minimum = book.skus.get(&*key.sku).and_then(|s| s.minimum_seconds);
        if let (Some(m), Some(q)) = (minimum, runs.max_quantity()) {
            unit_seconds = add(unit_seconds, q.checked_mul(Decimal::from(m)));
        }
    }
    let per_hour = Decimal::from(3600);
    let mut bound = unit_seconds
        .and_then(|u| u.checked_mul(rate))
        .and_then(|u| u.checked_mul(multiplier))
        .map(|u| u / per_hour);
    for (dest, records) in ledger.egress() {
        let gb = gigabytes(bytes_in(records, period));
        let top = book
            .egress
            .get(dest)
            .and_then(|tiers| tiers.iter().map(|t| t.rate).max())
            .unwrap_or_default();
        bound = add(bound, gb.and_then(|g| g.checked_mul(top)));
    }
    match bound {
        Some(b) if b <= MAX_AMOUNT => Ok(()),
        other => Err(too_large(other)),
    }
}

/// Σ quantity x seconds of `keys` inside the period.
fn unit_seconds_in(keys: &[&Runs], period: &Period) -> Decimal {
    keys.iter()
        .flat_map(|r| r.clipped(period.start, period.end))
        .map(|r| r.unit_seconds())
        .sum()
}

/// Sections 4.1 to 4.4 for one sku: reserved coverage, off-peak, tiers in time order.
fn rate_on_demand(
    ctx: &RatingContext<'_>,
    sku_name: &str,
    sku: &Sku,
    tiers: &[crate::tiers::Tier],
    keys: &[&Runs],
    reservations: &[&Reservation],
    lines: &mut Vec<Line>,
) {
    let period = &ctx.period;
    // Changes of U and R over time: (instant, dU, dR).
    let mut deltas: Vec<(i64, Decimal, Decimal)> = Vec::new();
    for run in keys
        .iter()
        .flat_map(|r| r.clipped(period.start, period.end))
    {
        deltas.push((run.from, run.quantity, Decimal::ZERO));
        deltas.push((run.to, -run.quantity, Decimal::ZERO));
    }
    for r in reservations {
        if let Some((a, b)) = active_span(r, period) {
            deltas.push((a, Decimal::ZERO, r.quantity));
            deltas.push((b, Decimal::ZERO, -r.quantity));
        }
    }
    deltas.sort_unstable_by_key(|d| d.0);

    let cuts = ctx.schedule.cuts();
    let (mut u, mut r) = (Decimal::ZERO, Decimal::ZERO);
    let mut covered = Decimal::ZERO;
    let mut filled = Decimal::ZERO; // A: overflow unit-seconds so far
    // (tier, multiplier) -> unit-seconds. Multipliers compare as numbers.
    let mut buckets: BTreeMap<(usize, Decimal), Decimal> = BTreeMap::new();
    let mut volume: BTreeMap<Decimal, Decimal> = BTreeMap::new();
    let (mut di, mut ci) = (0, 0);
    let mut t = period.start;
    while t < period.end {
        if di >= deltas.len() && u.is_zero() {
            break;
        }
        while di < deltas.len() && deltas[di].0 <= t {
            u += deltas[di].1;
            r += deltas[di].2;
            di += 1;
        }
        while ci + 1 < cuts.len() && cuts[ci + 1] <= t {
            ci += 1;
        }
        let next_delta = deltas.get(di).map_or(period.end, |d| d.0);
        let next_cut = cuts.get(ci + 1).copied().unwrap_or(period.end);
        let next = next_delta.min(next_cut).min(period.end);
        if u > Decimal::ZERO {
            let seconds = Decimal::from(next - t);
            let c = u.min(r);
            covered += c * seconds;
            let overflow = (u - c) * seconds;
            if !overflow.is_zero() {
                let m = ctx.schedule.multiplier(&ctx.book.offpeak, sku_name, ci);
                match sku.tier_mode {
                    TierMode::Volume if sku.tiers.len() > 1 => {
                        *volume.entry(m).or_default() += overflow
                    }
                    _ => split_graduated(tiers, filled, overflow, |tier, part| {
                        *buckets.entry((tier, m)).or_default() += part;
                    }),
                }
                filled += overflow;
            }
        }
        t = next;
    }
    if !volume.is_empty() {
        let tier = volume_tier(tiers, filled);
        for (m, q) in volume {
            *buckets.entry((tier, m)).or_default() += q;
        }
    }
    for ((tier, m), q) in buckets {
        let mut line = Line::usage(
            Component::OnDemand,
            sku_name,
            tier,
            q,
            usage_amount(q, tiers[tier].rate, m),
        );
        line.multiplier = Some(m);
        lines.push(line);
    }
    lines.push(Line::usage(
        Component::ReservedUsage,
        sku_name,
        0,
        covered,
        Decimal::ZERO,
    ));
}

/// Rates every account named by an accepted event or by the price book's account terms
/// (sorted by account), or only `only`. Credits start from the full sum (as `gpubill rate`).
pub fn rate_all(
    book: &PriceBook,
    period: Period,
    meter: &Meter,
    only: Option<&str>,
) -> Result<Vec<Rated>, RatingError> {
    let ctx = RatingContext::new(book, period);
    let mut accounts: BTreeSet<&str> = book.accounts();
    accounts.extend(meter.accounts().map(|(a, _)| a));
    if let Some(one) = only {
        accounts = BTreeSet::from([one]);
    }
    accounts
        .into_iter()
        .map(|a| rate_account(&ctx, a, meter.account(a), book.credit_total(a)))
        .collect()
}
