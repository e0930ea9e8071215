//! The magnitude bound of rating: an account that could owe more than [`MAX_AMOUNT`] for a
//! period is a rating error, never an overflow.

use crate::ledger::AccountLedger;
use crate::pricing::account_index::TermsOfAccount;
use crate::pricing::egress::{bytes_in, gigabytes};
use crate::pricing::pricebook::Subscription;
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
/// `terms` are the account's, `subscriptions` its subscriptions with their started bounds
/// (up to the period's end at least: [`crate::pricing::subscriptions::started_bounds_until`]).
/// `summed_usage`: when the period is rated from the keys' sum ([`crate::pricing::summed`]),
/// the usage term its gate computed from the sum (the same term).
pub fn check_magnitude(
    ctx: &RatingContext<'_>,
    terms: &TermsOfAccount<'_>,
    subscriptions: &[(&Subscription, Vec<i64>)],
    (account, ledger): (&str, &AccountLedger),
    summed_usage: Option<Decimal>,
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
    let mut unit_seconds = Some(Decimal::ZERO);
    for r in &terms.reservations {
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
    let usage = match summed_usage {
        Some(u) => Some(u),
        None => usage_bound(ctx, ledger, sla.is_some()),
    };
    unit_seconds = add(unit_seconds, usage);
    let per_hour = Decimal::from(3600);
    let mut bound = unit_seconds
        .and_then(|u| u.checked_mul(rate))
        .and_then(|u| u.checked_mul(multiplier))
        .map(|u| u / per_hour);
    bound = add(bound, egress_bound(ctx, ledger));
    for p in &terms.packages {
        bound = add(bound, Some(p.price));
    }
    for c in &terms.charges {
        bound = add(bound, Some(c.amount));
    }
    for (s, bounds) in subscriptions {
        // The cycles starting in the period (an auto-renewing one has many more).
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

/// The unit-seconds the usage keys can bill: their usage in the period and, at each key's
/// largest quantity, the minimum charge (4.6), a padding of one increment per run ending in
/// the period (15) and, with SLA compensation, the whole period (10). Seconds are summed as
/// integers per quantity first, then one decimal product per distinct quantity (the keys of
/// an account have a handful): the bound is the same sum, taken without a decimal operation
/// per run (it was a tenth of a busy engine's CPU, `docs/benchmarks.md`).
pub(crate) fn usage_bound(
    ctx: &RatingContext<'_>,
    ledger: &AccountLedger,
    sla: bool,
) -> Option<Decimal> {
    let (book, period) = (ctx.book, &ctx.period);
    let whole_period = if sla { period.seconds() } else { 0 };
    // Saturating: a sum past 96 bits fails the conversion below, as the decimal sum would.
    let mut seconds_at: std::collections::BTreeMap<Decimal, i128> = Default::default();
    let mut add = |q: Decimal, seconds: i128| {
        let s = seconds_at.entry(q).or_default();
        *s = s.saturating_add(seconds);
    };
    // The keys come by sku within a lease; the last sku's padding is kept.
    let mut last: Option<(&str, i64, i64)> = None;
    for (key, runs) in ledger.usage() {
        let mut ending: i128 = 0;
        for r in runs.clipped(period.start, period.end) {
            add(r.quantity, i128::from(r.seconds()));
            ending += 1;
        }
        let (minimum, increment) = match last {
            Some((sku, m, i)) if sku == &*key.sku => (m, i),
            _ => {
                let sku = book.skus.get(&*key.sku);
                let m = sku.and_then(|s| s.minimum_seconds).unwrap_or(0);
                let i = sku.and_then(|s| s.increment_seconds).unwrap_or(0);
                last = Some((&key.sku, m, i));
                (m, i)
            }
        };
        let seconds =
            i128::from(minimum) + i128::from(increment) * ending + i128::from(whole_period);
        if let (true, Some(q)) = (seconds > 0, runs.max_quantity()) {
            add(q, seconds);
        }
    }
    let mut unit_seconds = Decimal::ZERO;
    for (q, seconds) in seconds_at {
        let seconds = Decimal::try_from_i128_with_scale(seconds, 0).ok()?;
        unit_seconds = unit_seconds.checked_add(q.checked_mul(seconds)?)?;
    }
    Some(unit_seconds)
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
