//! Lease states in rating: billing-semantics.md section 8.
//!
//! The ledger seconds of a key whose lease is, at that second, in a state its sku prices
//! (`state_rates`) leave every other rule (4.2 to 4.6, 9, 12) and bill as one line per
//! (sku, state): `state:<state>`, `round(unit_seconds x rate / 3600, 2)`. What is left (the
//! key's *left runs*) goes on to the other rules; the minimum charge reads its covered
//! seconds, first second and largest quantity from the left runs only.
//!
//! SLA compensation (section 10) is not in that list: it reads the whole ledger.

use crate::common::money::usage_amount;
use crate::ledger::{AccountLedger, ResourceKey, Run, Runs};
use crate::pricing::invoice::{Component, Line};
use crate::pricing::period::Period;
use crate::pricing::pricebook::PriceBook;
use crate::rental::lease::{LeaseState, Timeline};
use rust_decimal::Decimal;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A usage key with its whole runs and the runs left to the other rules.
#[derive(Debug, Clone)]
pub struct KeyView<'a> {
    pub key: &'a ResourceKey,
    pub runs: &'a Runs,
    pub left: Cow<'a, Runs>,
}

/// Splits `runs` by the lease's state: seconds in a priced state go to `priced` (per state),
/// the rest is returned. Borrowed unchanged when the sku prices no state.
pub fn split_runs<'a>(
    runs: &'a Runs,
    timeline: Option<&Timeline>,
    rates: &BTreeMap<LeaseState, Decimal>,
    mut priced: impl FnMut(LeaseState, Run),
) -> Cow<'a, Runs> {
    if rates.is_empty() {
        return Cow::Borrowed(runs);
    }
    let mut left = Vec::with_capacity(runs.as_slice().len());
    for run in runs.as_slice() {
        let pieces = match timeline {
            Some(t) => t.pieces(run.from, run.to),
            None => vec![(run.from, run.to, LeaseState::Running)],
        };
        for (from, to, state) in pieces {
            let part = Run {
                from,
                to,
                quantity: run.quantity,
            };
            if rates.contains_key(&state) {
                priced(state, part);
            } else {
                left.push(part);
            }
        }
    }
    if left.len() == runs.as_slice().len() && left.as_slice() == runs.as_slice() {
        return Cow::Borrowed(runs);
    }
    Cow::Owned(Runs::from_runs(left))
}

/// Every usage key of the ledger with its left runs, sorted by key, and the `state:*` lines
/// of the period.
pub fn split_keys<'a>(
    book: &PriceBook,
    ledger: &'a AccountLedger,
    period: &Period,
    lines: &mut Vec<Line>,
) -> Vec<KeyView<'a>> {
    // (sku, state) -> unit-seconds in the period.
    let mut state_us: BTreeMap<(&str, LeaseState), Decimal> = BTreeMap::new();
    let mut keys = Vec::new();
    for (key, runs) in ledger.usage_sorted() {
        let Some(sku) = book.skus.get(&*key.sku) else {
            keys.push(KeyView {
                key,
                runs,
                left: Cow::Borrowed(runs),
            });
            continue;
        };
        let timeline = ledger.timeline(&key.lease);
        let left = split_runs(runs, timeline, &sku.state_rates, |state, run| {
            let (a, b) = (run.from.max(period.start), run.to.min(period.end));
            if a < b {
                *state_us.entry((&key.sku, state)).or_default() +=
                    run.quantity * Decimal::from(b - a);
            }
        });
        keys.push(KeyView { key, runs, left });
    }
    for ((sku_name, state), us) in state_us {
        let rate = book.skus[sku_name].state_rates[&state];
        lines.push(Line::usage(
            Component::State(state),
            sku_name,
            0,
            us,
            usage_amount(us, rate, Decimal::ONE),
        ));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use LeaseState::*;

    #[test]
    fn a_volume_of_a_lease_stopped_in_the_middle_keeps_only_running_seconds() {
        let runs = Runs::from_runs([Run {
            from: 0,
            to: 100,
            quantity: Decimal::from(500),
        }]);
        let mut t = Timeline::new();
        t.insert(30, Stopped);
        t.insert(60, Running);
        let rates = BTreeMap::from([(Stopped, Decimal::ONE)]);
        let mut stopped = Vec::new();
        let left = split_runs(&runs, Some(&t), &rates, |s, r| {
            stopped.push((s, r.from, r.to))
        });
        assert_eq!(stopped, vec![(Stopped, 30, 60)]);
        let left: Vec<(i64, i64)> = left.as_slice().iter().map(|r| (r.from, r.to)).collect();
        assert_eq!(left, vec![(0, 30), (60, 100)]);
    }

    #[test]
    fn an_sku_without_state_rates_borrows_its_runs() {
        let runs = Runs::from_runs([Run {
            from: 0,
            to: 10,
            quantity: Decimal::ONE,
        }]);
        let left = split_runs(&runs, None, &BTreeMap::new(), |_, _| panic!());
        assert!(matches!(left, Cow::Borrowed(_)));
    }
}
