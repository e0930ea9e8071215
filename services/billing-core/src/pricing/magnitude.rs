//! The magnitude bound of rating: an account that could owe more than [`MAX_AMOUNT`] for a
//! period is a rating error, never an overflow.

use crate::ledger::AccountLedger;
use crate::pricing::egress::{bytes_in, gigabytes};
use crate::pricing::rating_context::{RatingContext, RatingError};
use crate::pricing::reservations::active_span;
use rust_decimal::Decimal;

/// Largest amount an invoice may carry: 10^18 in the currency's major unit. Far beyond any
/// real bill, and small enough that every product and sum of the rating stays exact in a
/// `Decimal` (28 digits) with its 2 minor digits.
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(0xA764_0000, 0x0DE0_B6B3, 0, false, 0);

/// Refuses to rate when an upper bound of what the account could owe for the period exceeds
/// [`MAX_AMOUNT`]. The bound: every unit-second the rules can bill (usage in the period, the
/// minimum charge of every key, every reservation's commitment, and for SLA compensation
/// every key's largest quantity over the whole period) at the highest rate anywhere (tiers,
/// spot, states, curves, reservations) times the highest multiplier (off-peak or SLA), plus
/// every GB of egress (counters included) at the highest egress rate, plus every package and
/// subscription price. Each line's amount is at most its share of this bound, so when it
/// holds no multiplication or sum below can overflow and every amount keeps its 2 decimals
/// (`Invoice::assert_adds_up` cannot fail).
pub fn check_magnitude(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: &AccountLedger,
) -> Result<(), RatingError> {
    let (book, period) = (ctx.book, &ctx.period);
    let too_large = |bound: Option<Decimal>| RatingError::AmountTooLarge {
        account: account.to_string(),
        bound: bound.map_or_else(|| "beyond 7.9e28".to_string(), |b| b.round().to_string()),
        max: MAX_AMOUNT,
    };
    let add = |a: Option<Decimal>, b: Option<Decimal>| a?.checked_add(b?);
    let mut rate = ctx.platform.max_spot_price();
    for sku in book.skus.values() {
        let rates = sku.tiers.iter().map(|t| t.rate);
        let states = sku.state_rates.values().copied();
        for r in rates
            .chain(sku.rate_per_hour)
            .chain(sku.spot_rate_per_hour)
            .chain(states)
        {
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
    let sla = match (book.sla.compensation_multiplier, ctx.faults.is_empty()) {
        (Some(m), false) => Some(m),
        _ => None,
    };
    let multiplier = book
        .offpeak
        .iter()
        .map(|w| w.multiplier)
        .chain(sla)
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
        // Section 15: each run ending in the period pads less than one increment.
        let increment = book.skus.get(&*key.sku).and_then(|s| s.increment_seconds);
        if let (Some(n), Some(q)) = (increment, runs.max_quantity()) {
            let ending = runs.clipped(period.start, period.end).count();
            let padding = Decimal::from(n).checked_mul(Decimal::from(ending));
            unit_seconds = add(unit_seconds, padding.and_then(|p| q.checked_mul(p)));
        }
        if let (Some(_), Some(q)) = (sla, runs.max_quantity()) {
            unit_seconds = add(unit_seconds, q.checked_mul(Decimal::from(period.seconds())));
        }
    }
    let per_hour = Decimal::from(3600);
    let mut bound = unit_seconds
        .and_then(|u| u.checked_mul(rate))
        .and_then(|u| u.checked_mul(multiplier))
        .map(|u| u / per_hour);
    bound = add(bound, egress_bound(ctx, ledger));
    for p in book.packages.iter().filter(|p| p.account == account) {
        bound = add(bound, Some(p.price));
    }
    for c in book.charges.iter().filter(|c| c.account == account) {
        bound = add(bound, Some(c.amount));
    }
    for s in book.subscriptions.iter().filter(|s| s.account == account) {
        // The cycles starting in the period (an auto-renewing one has many more).
        let bounds = crate::pricing::subscriptions::started_bounds(s, book.timezone);
        let starting = bounds[..bounds.len() - 1]
            .iter()
            .filter(|&&b| period.contains(b))
            .count();
        bound = add(bound, s.price.checked_mul(Decimal::from(starting)));
    }
    match bound {
        Some(b) if b <= MAX_AMOUNT => Ok(()),
        other => Err(too_large(other)),
    }
}

/// Every GB of the period's egress (counters included) at its dest's highest rate.
fn egress_bound(ctx: &RatingContext<'_>, ledger: &AccountLedger) -> Option<Decimal> {
    let period = &ctx.period;
    let counters = crate::rental::counters::counter_bytes(ledger, period);
    let dests = ledger
        .egress()
        .keys()
        .map(String::as_str)
        .chain(counters.keys().copied());
    let mut bound = Some(Decimal::ZERO);
    for dest in dests.collect::<std::collections::BTreeSet<&str>>() {
        let records = ledger.egress().get(dest).map_or(&[][..], Vec::as_slice);
        let bytes = bytes_in(records, period) + counters.get(dest).copied().unwrap_or(0);
        let top = ctx
            .book
            .egress
            .get(dest)
            .and_then(|tiers| tiers.iter().map(|t| t.rate).max())
            .unwrap_or_default();
        let gb = gigabytes(bytes).and_then(|g| g.checked_mul(top));
        bound = bound.and_then(|b| b.checked_add(gb?));
    }
    bound
}
