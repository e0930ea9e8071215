//! An account's usage summed over its keys, per (class, sku), kept up to date as the ledger
//! changes (issue 29, part 2): what rating reads of on-demand usage when no rule needs the
//! keys one by one ([`crate::pricing::by_profile`]).
//!
//! The sum of the keys' per-second functions is a step function; a [`Steps`] holds its steps
//! (`U(t) − U(t − 1)` where non-zero). A change of one key over `[from, to)` moves steps at
//! `from ..= to` only, so folding an event costs a few map updates however many keys the
//! account has, and rating walks the steps (a handful in a fleet whose keys run side by
//! side) instead of every key's runs.

use crate::events::event::Class;
use crate::ledger::runs::Runs;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// The steps of the summed quantity of some keys: instant → `U(t) − U(t − 1)`, never zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Steps(BTreeMap<i64, Decimal>);

impl Steps {
    /// Adds (or with `negate` removes) one key's steps.
    fn add(&mut self, steps: &[(i64, Decimal)], negate: bool) {
        for &(t, d) in steps {
            let e = self.0.entry(t).or_insert(Decimal::ZERO);
            if negate {
                *e -= d;
            } else {
                *e += d;
            }
            if e.is_zero() {
                self.0.remove(&t);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many steps (the size rating walks).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `U` over `[from, to)` as changes: `(from, U(from))` first when it is not zero, then
    /// every step inside `(from, to)`, in time order.
    pub fn changes(&self, from: i64, to: i64) -> impl Iterator<Item = (i64, Decimal)> + '_ {
        let start: Decimal = self.0.range(..=from).map(|(_, d)| *d).sum();
        let first = (!start.is_zero()).then_some((from, start));
        let rest = (from < to)
            .then(|| self.0.range(from + 1..to))
            .into_iter()
            .flatten()
            .map(|(t, d)| (*t, *d));
        first.into_iter().chain(rest)
    }

    /// `Σ U(t)` over the seconds of `[from, to)`: the keys' unit-seconds there; `None` past
    /// a `Decimal`.
    pub fn unit_seconds(&self, from: i64, to: i64) -> Option<Decimal> {
        let mut total = Decimal::ZERO;
        let (mut u, mut at) = (Decimal::ZERO, from);
        for (t, d) in self.changes(from, to) {
            total = total.checked_add(u.checked_mul(Decimal::from(t - at))?)?;
            u = u.checked_add(d)?;
            at = t;
        }
        if at < to {
            total = total.checked_add(u.checked_mul(Decimal::from(to - at))?)?;
        }
        Some(total)
    }
}

/// Per class, per sku: the steps of the account's keys of that class and sku.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    on_demand: BTreeMap<Box<str>, Steps>,
    spot: BTreeMap<Box<str>, Steps>,
}

impl Profiles {
    fn of_mut(&mut self, class: Class) -> &mut BTreeMap<Box<str>, Steps> {
        match class {
            Class::OnDemand => &mut self.on_demand,
            Class::Spot => &mut self.spot,
        }
    }

    /// Per sku, the steps of the class's keys (skus without usage have none).
    pub fn of(&self, class: Class) -> &BTreeMap<Box<str>, Steps> {
        match class {
            Class::OnDemand => &self.on_demand,
            Class::Spot => &self.spot,
        }
    }

    /// A key of (`sku`, `class`) changed from `before` to `after` (its steps over the instants
    /// that may have moved: every instant, or `from ..= to` of the interval it changed over).
    pub(crate) fn replace(
        &mut self,
        sku: &str,
        class: Class,
        before: &[(i64, Decimal)],
        after: &[(i64, Decimal)],
    ) {
        if before == after {
            return;
        }
        let by_sku = self.of_mut(class);
        let steps = match by_sku.get_mut(sku) {
            Some(s) => s,
            None => by_sku.entry(sku.into()).or_default(),
        };
        steps.add(before, true);
        steps.add(after, false);
        if steps.is_empty() {
            by_sku.remove(sku);
        }
    }

    /// Adds a whole key (a ledger built from others').
    pub(crate) fn add_key(&mut self, sku: &str, class: Class, runs: &Runs) {
        self.replace(sku, class, &[], &runs.steps_in(i64::MIN, i64::MAX));
    }

    /// Steps held in all (memory estimates).
    pub fn len(&self) -> usize {
        self.on_demand
            .values()
            .chain(self.spot.values())
            .map(Steps::len)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.on_demand.is_empty() && self.spot.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::runs::Run;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn runs(list: &[(i64, i64, &str)]) -> Runs {
        Runs::from_runs(list.iter().map(|&(from, to, q)| Run {
            from,
            to,
            quantity: d(q),
        }))
    }

    /// Two keys side by side: 2 GPUs over [0, 100) and 1 over [50, 200). U is 2, 3, 1: the
    /// profile holds 4 steps, and its unit-seconds are 2x50 + 3x50 + 1x100 = 350 over all,
    /// 3x30 + 1x100 = 190 over [70, 300).
    #[test]
    fn two_keys_sum_into_steps_and_unit_seconds() {
        let mut p = Profiles::default();
        p.add_key("gpu", Class::OnDemand, &runs(&[(0, 100, "2")]));
        p.add_key("gpu", Class::OnDemand, &runs(&[(50, 200, "1")]));
        let steps = &p.of(Class::OnDemand)["gpu"];
        let all: Vec<(i64, Decimal)> = steps.changes(i64::MIN, i64::MAX).collect();
        assert_eq!(
            all,
            vec![(0, d("2")), (50, d("1")), (100, d("-2")), (200, d("-1"))]
        );
        assert_eq!(steps.unit_seconds(0, 300), Some(d("350")));
        assert_eq!(steps.unit_seconds(70, 300), Some(d("190")));
        let from_70: Vec<(i64, Decimal)> = steps.changes(70, 150).collect();
        assert_eq!(from_70, vec![(70, d("3")), (100, d("-2"))]);
    }

    /// A key that goes away takes its steps with it: nothing is left of the sku.
    #[test]
    fn removing_every_key_leaves_no_sku() {
        let mut p = Profiles::default();
        let r = runs(&[(0, 10, "1.5"), (10, 20, "2"), (30, 40, "1")]);
        p.add_key("gpu", Class::Spot, &r);
        assert_eq!(p.len(), 5);
        p.replace("gpu", Class::Spot, &r.steps_in(i64::MIN, i64::MAX), &[]);
        assert!(p.is_empty());
    }
}
