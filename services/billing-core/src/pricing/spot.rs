//! Spot usage: billing-semantics.md sections 4.5 and 9.
//!
//! The spot price of an sku at second `s` is that of the curve point with the latest
//! `from <= s` (several at one `from`: the lowest); before any point, the sku's
//! `spot_rate_per_hour`; with neither the usage is unpriced. Unit-seconds are priced second
//! by second: one `spot` line per (sku, price) with a `price` field.
//!
//! Interruption: a `spot` key whose lease has a `preempted` point anywhere in its timeline,
//! and whose left seconds (after section 8) number fewer than 3,600 over all its events, is
//! waived: its unit-seconds of the period show on one `spot_interrupted` line per sku,
//! amount 0.
//!
//! Choices: prices compare as numbers and show normalized with at least 2 decimals
//! (`"9.60"`, `"3.125"`); a curve prices spot usage of an sku even when the price book does
//! not name the sku (section 9 is the more specific rule); waived usage is never unpriced;
//! only the spot lines of an sku that has a curve carry `price`: an sku without one rates
//! exactly as in part 1 (one `spot` line, no `price`), as "rules 8 to 13 change only the
//! skus that use them" requires.

use crate::common::money::{show_quantity, usage_amount};
use crate::events::event::Class;
use crate::ledger::AccountLedger;
use crate::pricing::invoice::{Component, Line, Unit};

use crate::pricing::rating_context::{RatingContext, Unpriced};
use crate::rental::states::KeyView;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// A spot key that ran less than this (left seconds over all its events) and was preempted
/// is waived (section 9).
pub const INTERRUPTION_WAIVER_SECONDS: i64 = 3_600;

/// A price as lines show and compare it: normalized, at least 2 decimals.
pub fn show_price(p: Decimal) -> Decimal {
    let mut p = p.normalize();
    if p.scale() < 2 {
        p.rescale(2);
    }
    p
}

/// Per sku: (price -> unit-seconds), waived unit-seconds, unpriced unit-seconds.
#[derive(Default)]
struct SkuSpot {
    priced: BTreeMap<Decimal, Decimal>,
    waived: Decimal,
    unpriced: Decimal,
}

/// The `spot` and `spot_interrupted` lines of the account, and its unpriced spot usage.
pub fn spot_lines(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: &AccountLedger,
    keys: &[KeyView<'_>],
    lines: &mut Vec<Line>,
    unpriced: &mut Vec<Unpriced>,
) {
    let period = &ctx.period;
    let mut by_sku: BTreeMap<&str, SkuSpot> = BTreeMap::new();
    for k in keys.iter().filter(|k| k.key.class == Class::Spot) {
        let acc = by_sku.entry(&k.key.sku).or_default();
        let preempted = ledger
            .timeline(&k.key.lease)
            .is_some_and(|t| t.was_preempted());
        if preempted && k.left.covered_seconds() < INTERRUPTION_WAIVER_SECONDS {
            acc.waived += k
                .left
                .clipped(period.start, period.end)
                .map(|r| r.unit_seconds())
                .sum::<Decimal>();
            continue;
        }
        let base = ctx
            .book
            .skus
            .get(&*k.key.sku)
            .and_then(|s| s.spot_rate_per_hour)
            .map(|r| r.normalize());
        let curve = ctx.platform.curve(&k.key.sku);
        for run in k.left.clipped(period.start, period.end) {
            price_pieces(curve, base, run.from, run.to, |price, seconds| {
                let us = run.quantity * Decimal::from(seconds);
                match price {
                    Some(p) => *acc.priced.entry(p).or_default() += us,
                    None => acc.unpriced += us,
                }
            });
        }
    }
    for (sku, acc) in by_sku {
        for (price, us) in acc.priced {
            let mut line = Line::usage(
                Component::Spot,
                sku,
                0,
                us,
                usage_amount(us, price, Decimal::ONE),
            );
            // Part 1 unchanged: an sku without a curve shows no price (section 8-13 preamble).
            if ctx.platform.curve(sku).is_some() {
                line.price = Some(show_price(price));
            }
            lines.push(line);
        }
        lines.push(Line::usage(
            Component::SpotInterrupted,
            sku,
            0,
            acc.waived,
            Decimal::ZERO,
        ));
        if !acc.unpriced.is_zero() {
            unpriced.push(Unpriced {
                account: account.to_string(),
                sku: Some(sku.to_string()),
                class: Some(Class::Spot),
                dest: None,
                quantity: show_quantity(acc.unpriced),
                unit: Unit::UnitSeconds,
                why: if ctx.book.skus.contains_key(sku) {
                    "sku has no spot_rate_per_hour".into()
                } else {
                    "sku not in the price book".into()
                },
                region: None,
            });
        }
    }
}

/// Calls `f(price, seconds)` for each piece of `[from, to)` at one price (None: unpriced).
pub(crate) fn price_pieces(
    curve: Option<&BTreeMap<i64, Decimal>>,
    base: Option<Decimal>,
    from: i64,
    to: i64,
    mut f: impl FnMut(Option<Decimal>, i64),
) {
    let Some(curve) = curve else {
        f(base, to - from);
        return;
    };
    let mut t = from;
    let mut price = curve.range(..=from).next_back().map(|(_, p)| *p).or(base);
    for (&at, &p) in curve.range(from + 1..to) {
        f(price, at - t);
        t = at;
        price = Some(p);
    }
    f(price, to - t);
}

/// Upper bound of the spot price anywhere (for the magnitude check).
pub fn max_price(ctx: &RatingContext<'_>) -> Decimal {
    ctx.platform.max_spot_price()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_change_in_the_middle_of_a_run_splits_it() {
        let curve = BTreeMap::from([(100, Decimal::from(3)), (130, Decimal::from(2))]);
        let mut got = Vec::new();
        price_pieces(Some(&curve), Some(Decimal::from(9)), 90, 160, |p, s| {
            got.push((p, s))
        });
        assert_eq!(
            got,
            vec![
                (Some(Decimal::from(9)), 10),
                (Some(Decimal::from(3)), 30),
                (Some(Decimal::from(2)), 30)
            ]
        );
    }

    #[test]
    fn prices_show_with_two_decimals_at_least() {
        assert_eq!(show_price("9.6".parse().unwrap()).to_string(), "9.60");
        assert_eq!(show_price("3.1250".parse().unwrap()).to_string(), "3.125");
        assert_eq!(show_price(Decimal::ZERO).to_string(), "0.00");
    }
}
