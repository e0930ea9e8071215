//! An account's usage summed over its keys, per (class, sku), kept up to date as the ledger
//! changes (issue 29, part 2): what rating reads of on-demand usage when no rule needs the
//! keys one by one ([`crate::pricing::summed`]).
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

/// What the minimum charge (section 4.6) and its magnitude bound read of one key: its
/// covered seconds, first second and largest quantity (of whole runs: the profile is read
/// only for skus that price no lease state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Shape {
    covered: i64,
    first: i64,
    max: Decimal,
}

/// What one key adds to its (class, sku)'s profile, over the instants a change may have
/// moved ([`KeyPart::of`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyPart {
    steps: Vec<(i64, Decimal)>,
    shape: Option<Shape>,
}

impl KeyPart {
    /// The key with `runs`: its steps at the instants of `[from, to]` (every instant for a
    /// whole key; `from ..= to` around a change over `[from, to)`) and its shape.
    pub(crate) fn of(runs: &Runs, from: i64, to: i64) -> KeyPart {
        let shape = match (runs.first_second(), runs.max_quantity()) {
            (Some(first), Some(max)) => Some(Shape {
                covered: runs.covered_seconds(),
                first,
                max,
            }),
            _ => None,
        };
        KeyPart {
            steps: runs.steps_in(from, to),
            shape,
        }
    }

    /// The whole key.
    pub(crate) fn whole(runs: &Runs) -> KeyPart {
        KeyPart::of(runs, i64::MIN, i64::MAX)
    }
}

/// The keys of one (class, sku) summed: the steps of their quantity, how many keys there are
/// of each shape (the minimum charge's inputs), and the sum of their largest quantities.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkuProfile {
    steps: Steps,
    shapes: BTreeMap<Shape, u32>,
    max_sum: Decimal,
}

impl SkuProfile {
    pub fn steps(&self) -> &Steps {
        &self.steps
    }

    /// Section 4.6 from the keys' shapes: `Σ (minimum − covered) x largest quantity` over the
    /// keys whose first second is in `[start, end)` and that cover fewer than `minimum`
    /// seconds (`pricing::minimum::owed_unit_seconds`, summed). Reads the short keys only.
    pub fn minimum_owed(&self, minimum: i64, start: i64, end: i64) -> Decimal {
        let short = Shape {
            covered: minimum,
            first: i64::MIN,
            max: Decimal::MIN,
        };
        self.shapes
            .range(..short)
            .filter(|(s, _)| start <= s.first && s.first < end)
            .map(|(s, n)| Decimal::from(minimum - s.covered) * s.max * Decimal::from(*n))
            .sum()
    }

    /// `Σ` of every key's largest quantity (the magnitude bound's minimum charges).
    pub fn max_sum(&self) -> Decimal {
        self.max_sum
    }

    fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    fn shape(&mut self, shape: Option<Shape>, negate: bool) {
        let Some(shape) = shape else { return };
        if negate {
            self.max_sum -= shape.max;
            if let Some(n) = self.shapes.get_mut(&shape) {
                *n -= 1;
                if *n == 0 {
                    self.shapes.remove(&shape);
                }
            }
        } else {
            self.max_sum += shape.max;
            *self.shapes.entry(shape).or_default() += 1;
        }
    }
}

/// Per class, per sku: the account's keys of that class and sku, summed ([`SkuProfile`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    on_demand: BTreeMap<Box<str>, SkuProfile>,
    spot: BTreeMap<Box<str>, SkuProfile>,
}

impl Profiles {
    fn of_mut(&mut self, class: Class) -> &mut BTreeMap<Box<str>, SkuProfile> {
        match class {
            Class::OnDemand => &mut self.on_demand,
            Class::Spot => &mut self.spot,
        }
    }

    /// Per sku, the class's keys summed (skus without usage have none).
    pub fn of(&self, class: Class) -> &BTreeMap<Box<str>, SkuProfile> {
        match class {
            Class::OnDemand => &self.on_demand,
            Class::Spot => &self.spot,
        }
    }

    /// A key of (`sku`, `class`) changed from `before` to `after`, both taken over the same
    /// instants ([`KeyPart::of`]).
    pub(crate) fn replace(&mut self, sku: &str, class: Class, before: &KeyPart, after: &KeyPart) {
        if before == after {
            return;
        }
        let by_sku = self.of_mut(class);
        let profile = match by_sku.get_mut(sku) {
            Some(p) => p,
            None => by_sku.entry(sku.into()).or_default(),
        };
        profile.steps.add(&before.steps, true);
        profile.steps.add(&after.steps, false);
        profile.shape(before.shape, true);
        profile.shape(after.shape, false);
        if profile.is_empty() {
            by_sku.remove(sku);
        }
    }

    /// Adds a whole key (a ledger built from others').
    pub(crate) fn add_key(&mut self, sku: &str, class: Class, runs: &Runs) {
        self.replace(sku, class, &KeyPart::default(), &KeyPart::whole(runs));
    }

    /// Steps and shapes held in all (memory estimates).
    pub fn len(&self) -> usize {
        self.on_demand
            .values()
            .chain(self.spot.values())
            .map(|p| p.steps.len() + p.shapes.len())
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
        let steps = p.of(Class::OnDemand)["gpu"].steps();
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

    /// Section 4.6 from shapes, minimum 60 s in `[0, 1000)`: a key of 20 s at 2 GPUs owes
    /// 40 x 2 = 80, one of 50 s at 0.5 (two runs, largest 0.5) owes 10 x 0.5 = 5; a key of
    /// 60 s owes nothing, nor one starting at 1000 (the next period's). Largest quantities
    /// sum to 2 + 0.5 + 1 + 1 = 4.5.
    #[test]
    fn short_keys_owe_the_minimum_from_their_shapes() {
        let mut p = Profiles::default();
        p.add_key("gpu", Class::OnDemand, &runs(&[(100, 120, "2")]));
        p.add_key(
            "gpu",
            Class::OnDemand,
            &runs(&[(0, 25, "0.25"), (30, 55, "0.5")]),
        );
        p.add_key("gpu", Class::OnDemand, &runs(&[(200, 260, "1")]));
        p.add_key("gpu", Class::OnDemand, &runs(&[(1000, 1010, "1")]));
        let gpu = &p.of(Class::OnDemand)["gpu"];
        assert_eq!(gpu.minimum_owed(60, 0, 1000), d("85"));
        assert_eq!(gpu.minimum_owed(60, 1000, 2000), d("50"));
        assert_eq!(gpu.max_sum(), d("4.5"));
    }

    /// A key that goes away takes its steps with it: nothing is left of the sku.
    #[test]
    fn removing_every_key_leaves_no_sku() {
        let mut p = Profiles::default();
        let r = runs(&[(0, 10, "1.5"), (10, 20, "2"), (30, 40, "1")]);
        p.add_key("gpu", Class::Spot, &r);
        assert_eq!(p.len(), 5 + 1);
        p.replace("gpu", Class::Spot, &KeyPart::whole(&r), &KeyPart::default());
        assert!(p.is_empty());
    }
}
