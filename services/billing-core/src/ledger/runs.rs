//! Runs: a usage key's seconds as disjoint `[from, to)` intervals at one quantity each, with
//! the union that makes redelivery and overlap idempotent (billing-semantics section 2).
//! Re-exported by [`crate::ledger`].

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Seconds `[from, to)` (UTC Unix seconds) at one quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub from: i64,
    pub to: i64,
    pub quantity: Decimal,
}

impl Run {
    pub fn seconds(&self) -> i64 {
        self.to - self.from
    }

    /// `quantity x seconds`.
    pub fn unit_seconds(&self) -> Decimal {
        self.quantity * Decimal::from(self.seconds())
    }
}

/// The runs of one usage key: sorted, disjoint, non-empty, and no two touching runs with the
/// same quantity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Runs(Vec<Run>);

impl Runs {
    pub fn new() -> Self {
        Runs(Vec::new())
    }

    /// Builds runs from any list of (possibly overlapping) runs by folding them in.
    pub fn from_runs(runs: impl IntoIterator<Item = Run>) -> Self {
        let mut r = Runs::new();
        for run in runs {
            r.insert(run.from, run.to, run.quantity);
        }
        r
    }

    pub fn as_slice(&self) -> &[Run] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Union-with-max of `[from, to)` at `quantity` into the runs. Returns whether anything
    /// changed (a fully covered heartbeat changes nothing).
    pub fn insert(&mut self, from: i64, to: i64, quantity: Decimal) -> bool {
        assert!(from < to, "ledger insert of an empty interval {from}..{to}");
        assert!(
            quantity > Decimal::ZERO,
            "ledger insert of quantity {quantity}"
        );
        let runs = &mut self.0;
        // Fast path: heartbeats mostly arrive in order, after everything seen.
        if let Some(last) = runs.last_mut() {
            if last.to < from || (last.to == from && last.quantity != quantity) {
                runs.push(Run { from, to, quantity });
                return true;
            }
            if last.to == from {
                last.to = to;
                return true;
            }
            // An overlapping heartbeat of the same quantity that only reaches into the last
            // run: extend it in place.
            if last.from <= from && last.quantity == quantity {
                if to <= last.to {
                    return false;
                }
                last.to = to;
                return true;
            }
        } else {
            runs.push(Run { from, to, quantity });
            return true;
        }
        // Runs overlapping [from, to) are runs[lo..hi]; widen by one on each side so merges
        // with touching neighbours happen in the same pass.
        let lo = runs.partition_point(|r| r.to < from);
        let hi = runs.partition_point(|r| r.from <= to);
        if hi == lo + 1 {
            let r = runs[lo];
            if r.from <= from && to <= r.to && r.quantity >= quantity {
                return false;
            }
        }
        let mut out: Vec<Run> = Vec::with_capacity(hi - lo + 2);
        let mut cursor = from;
        for r in &runs[lo..hi] {
            if r.to <= from || r.from >= to {
                // A neighbour that only touches the new interval.
                if r.to <= from {
                    push(&mut out, r.from, r.to, r.quantity);
                } else {
                    push(&mut out, cursor, to, quantity);
                    cursor = to;
                    push(&mut out, r.from, r.to, r.quantity);
                }
                continue;
            }
            push(&mut out, r.from, from, r.quantity);
            push(&mut out, cursor, r.from, quantity);
            let (s, e) = (r.from.max(from), r.to.min(to));
            push(&mut out, s, e, r.quantity.max(quantity));
            cursor = e;
            push(&mut out, to, r.to, r.quantity);
        }
        push(&mut out, cursor, to, quantity);
        let changed = out.as_slice() != &runs[lo..hi];
        runs.splice(lo..hi, out);
        self.assert_valid_around(lo);
        changed
    }

    /// Money invariant, on in release: the runs near an edit are sorted, disjoint and merged.
    fn assert_valid_around(&self, at: usize) {
        let runs = &self.0;
        let from = at.saturating_sub(2);
        let to = (at + 8).min(runs.len());
        for w in runs[from..to].windows(2) {
            assert!(
                w[0].from < w[0].to && w[0].to <= w[1].from,
                "ledger runs overlap: {w:?}"
            );
            assert!(
                w[0].to < w[1].from || w[0].quantity != w[1].quantity,
                "ledger runs not merged: {w:?}"
            );
        }
    }

    /// Checks the whole invariant (tests and property tests).
    pub fn is_canonical(&self) -> bool {
        self.0
            .iter()
            .all(|r| r.from < r.to && r.quantity > Decimal::ZERO)
            && self.0.windows(2).all(|w| {
                w[0].to <= w[1].from && (w[0].to < w[1].from || w[0].quantity != w[1].quantity)
            })
    }

    /// The runs clipped to `[from, to)`.
    pub fn clipped(&self, from: i64, to: i64) -> impl Iterator<Item = Run> + '_ {
        let lo = self.0.partition_point(|r| r.to <= from);
        self.0[lo..]
            .iter()
            .take_while(move |r| r.from < to)
            .map(move |r| Run {
                from: r.from.max(from),
                to: r.to.min(to),
                quantity: r.quantity,
            })
    }

    /// The steps of the per-second function at the instants `t` of `[a, b]`: `f(t) − f(t − 1)`
    /// where it is not zero, in time order ([`crate::ledger::profile`]). A change of the runs
    /// over `[from, to)` moves steps at `from ..= to` only.
    pub fn steps_in(&self, a: i64, b: i64) -> Vec<(i64, Decimal)> {
        let lo = self.0.partition_point(|r| r.to < a);
        let mut out: Vec<(i64, Decimal)> = Vec::new();
        let mut step = |t: i64, d: Decimal| {
            if t < a || t > b {
                return;
            }
            match out.last_mut() {
                Some((last, sum)) if *last == t => *sum += d,
                _ => out.push((t, d)),
            }
        };
        for r in self.0[lo..].iter().take_while(|r| r.from <= b) {
            step(r.from, r.quantity);
            step(r.to, -r.quantity);
        }
        out.retain(|(_, d)| !d.is_zero());
        out
    }

    /// Seconds with any usage, over all time.
    pub fn covered_seconds(&self) -> i64 {
        self.0.iter().map(Run::seconds).sum()
    }

    pub fn first_second(&self) -> Option<i64> {
        self.0.first().map(|r| r.from)
    }

    pub fn max_quantity(&self) -> Option<Decimal> {
        self.0.iter().map(|r| r.quantity).max()
    }

    /// Quantity at second `s` (0 when none).
    pub fn quantity_at(&self, s: i64) -> Decimal {
        let i = self.0.partition_point(|r| r.to <= s);
        match self.0.get(i) {
            Some(r) if r.from <= s => r.quantity,
            _ => Decimal::ZERO,
        }
    }

    /// Heap bytes held (for the memory-per-key benchmark).
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<Run>()
    }
}

/// Appends `[from, to)` to runs under construction, merging with a touching equal run.
fn push(out: &mut Vec<Run>, from: i64, to: i64, quantity: Decimal) {
    if from >= to {
        return;
    }
    match out.last_mut() {
        Some(last) if last.to == from && last.quantity == quantity => last.to = to,
        _ => out.push(Run { from, to, quantity }),
    }
}

#[cfg(test)]
mod tests {
    use crate::ledger::runs::{Run, Runs};
    use rust_decimal::Decimal;

    fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn run(from: i64, to: i64, q: &str) -> Run {
        Run {
            from,
            to,
            quantity: dec(q),
        }
    }

    #[test]
    fn two_heartbeats_overlapping_by_5s_bill_the_union() {
        let mut r = Runs::new();
        r.insert(0, 30, dec("1"));
        r.insert(25, 55, dec("1"));
        assert_eq!(r.as_slice(), &[run(0, 55, "1")]);
        assert_eq!(r.covered_seconds(), 55); // 30 + 30 - 5, not 60
    }

    #[test]
    fn union_with_max_keeps_the_larger_share_per_second() {
        // worked-1 beta: 0.25 over 09:00-10:00, 0.5 over 09:30-10:30 -> 1,800 x 0.25 + 3,600 x 0.5
        let mut r = Runs::new();
        r.insert(0, 3600, dec("0.25"));
        r.insert(1800, 5400, dec("0.5"));
        assert_eq!(
            r.as_slice(),
            &[run(0, 1800, "0.25"), run(1800, 5400, "0.5")]
        );
        let total: Decimal = r.as_slice().iter().map(Run::unit_seconds).sum();
        assert_eq!(total, dec("2250"));
        // Redelivery and reverse order change nothing.
        let mut back = Runs::new();
        back.insert(1800, 5400, dec("0.5"));
        back.insert(0, 3600, dec("0.25"));
        back.insert(0, 3600, dec("0.25"));
        assert_eq!(back, r);
    }

    #[test]
    fn a_smaller_quantity_inside_a_larger_changes_nothing() {
        let mut r = Runs::from_runs([run(0, 100, "2")]);
        assert!(!r.insert(10, 20, dec("1")));
        assert_eq!(r.as_slice(), &[run(0, 100, "2")]);
    }

    #[test]
    fn a_larger_quantity_inside_splits_the_run() {
        let mut r = Runs::from_runs([run(0, 100, "1")]);
        assert!(r.insert(10, 20, dec("3")));
        assert_eq!(
            r.as_slice(),
            &[run(0, 10, "1"), run(10, 20, "3"), run(20, 100, "1")]
        );
    }

    #[test]
    fn filling_a_gap_merges_three_runs_into_one() {
        let mut r = Runs::from_runs([run(0, 10, "1"), run(20, 30, "1")]);
        assert_eq!(r.as_slice().len(), 2);
        r.insert(10, 20, dec("1"));
        assert_eq!(r.as_slice(), &[run(0, 30, "1")]);
        r.insert(40, 50, dec("1"));
        r.insert(5, 45, dec("0.5"));
        assert_eq!(
            r.as_slice(),
            &[run(0, 30, "1"), run(30, 40, "0.5"), run(40, 50, "1")]
        );
    }

    #[test]
    fn clip_and_lookups() {
        let r = Runs::from_runs([run(0, 10, "1"), run(20, 30, "2")]);
        let c: Vec<Run> = r.clipped(5, 25).collect();
        assert_eq!(c, vec![run(5, 10, "1"), run(20, 25, "2")]);
        assert_eq!(r.quantity_at(25), dec("2"));
        assert_eq!(r.quantity_at(15), Decimal::ZERO);
        assert_eq!(r.covered_seconds(), 20);
        assert_eq!(r.max_quantity(), Some(dec("2")));
    }

    #[test]
    fn equal_quantities_in_other_spellings_merge() {
        let mut r = Runs::new();
        r.insert(0, 10, dec("0.5"));
        r.insert(10, 20, dec("0.50"));
        assert_eq!(r.as_slice().len(), 1);
        assert!(r.is_canonical());
    }
}
