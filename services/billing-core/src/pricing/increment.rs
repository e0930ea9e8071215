//! Billing increments (计费粒度: by the minute, by the hour): billing-semantics.md section 15.
//!
//! An sku with `increment_seconds = N` bills its on-demand usage in whole increments. For
//! each on-demand resource of the sku, its seconds left after section 8 over *all* its events
//! (covered by reservations, subscriptions or packages or not) split into runs of
//! consecutive seconds; a run of `L` seconds owes `ceil(L / N) x N - L` more seconds at the
//! ledger quantity of its last second, in the period holding its last second. The padding
//! makes one `increment` line per sku at the first-tier (or plain) rate, with no multiplier,
//! reservation, package or tier.
//!
//! Runs of consecutive seconds ignore quantity changes: `[10:00, 10:05)` at 1 followed by
//! `[10:05, 10:08:20)` at 2 is one run of 500 s, padded at 2 (worked example 3).

use crate::ledger::Runs;
use crate::pricing::period::Period;
use rust_decimal::Decimal;

/// Each maximal run of consecutive seconds of `runs`: (first second, end, quantity of the
/// last second), in time order, without collecting them (rating reads them once per key).
pub fn consecutive_runs(runs: &Runs) -> impl Iterator<Item = (i64, i64, Decimal)> + '_ {
    let mut it = runs.as_slice().iter().peekable();
    std::iter::from_fn(move || {
        let first = it.next()?;
        let (from, mut to, mut quantity) = (first.from, first.to, first.quantity);
        while let Some(next) = it.next_if(|r| r.from == to) {
            to = next.to;
            quantity = next.quantity;
        }
        Some((from, to, quantity))
    })
}

/// Unit-seconds the resource with (left) `runs` owes in `period` for increments of
/// `increment` seconds: the padding of every run whose last second is in the period. A run
/// of whole increments owes nothing and costs no decimal arithmetic.
pub fn owed_unit_seconds(runs: &Runs, increment: i64, period: &Period) -> Decimal {
    consecutive_runs(runs)
        .filter(|&(_, to, _)| period.contains(to - 1))
        .filter_map(|(from, to, quantity)| {
            let length = to - from;
            let padding = (length + increment - 1) / increment * increment - length;
            (padding > 0).then(|| Decimal::from(padding) * quantity)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Run;

    fn runs(spans: &[(i64, i64, &str)]) -> Runs {
        Runs::from_runs(spans.iter().map(|&(from, to, q)| Run {
            from,
            to,
            quantity: q.parse().unwrap(),
        }))
    }

    fn month(label: &str) -> Period {
        Period::month(label, chrono_tz::Tz::UTC).unwrap()
    }

    #[test]
    fn a_run_crossing_a_period_boundary_is_padded_in_the_period_of_its_last_second() {
        // increment_seconds = 3600. A run from Oct 31 23:30 to Nov 1 00:20 (50 min = 3000 s)
        // owes 3600 - 3000 = 600 s, all in November (its last second, 00:19:59, is there);
        // October owes nothing for it, although 1800 of its seconds are October's.
        let nov = month("2026-11");
        let r = runs(&[(nov.start - 1800, nov.start + 1200, "1")]);
        assert_eq!(
            owed_unit_seconds(&r, 3600, &month("2026-10")),
            Decimal::ZERO
        );
        assert_eq!(owed_unit_seconds(&r, 3600, &nov), Decimal::from(600));
        // A run of exactly 2 h owes nothing; one of 2 h + 1 s owes 3599 s.
        let exact = runs(&[(nov.start, nov.start + 7200, "1")]);
        assert_eq!(owed_unit_seconds(&exact, 3600, &nov), Decimal::ZERO);
        let more = runs(&[(nov.start, nov.start + 7201, "1")]);
        assert_eq!(owed_unit_seconds(&more, 3600, &nov), Decimal::from(3599));
    }

    #[test]
    fn the_padding_is_at_the_quantity_of_the_last_second() {
        // Worked example 3, R3: 300 s at 1 then 200 s at 2: one run of 500 s, N = 600, owes
        // 100 s x 2 = 200 unit-seconds (not 100 at the first quantity).
        let nov = month("2026-11");
        let t = nov.start + 9 * 86_400;
        let r = runs(&[(t, t + 300, "1"), (t + 300, t + 500, "2")]);
        assert_eq!(owed_unit_seconds(&r, 600, &nov), Decimal::from(200));
    }

    #[test]
    fn a_late_event_joining_two_runs_moves_the_increment() {
        // N = 3600. Before: [23:00, 23:50) Nov 30 (3000 s, owes 600 in November) and
        // [00:10, 00:40) Dec 1 (1800 s, owes 1800 in December). The late heartbeat
        // [23:50, 00:10) joins them into one run of 6000 s that owes 1200 s, in December
        // (its last second): November's 600 moves away, December's 1800 becomes 1200.
        let (nov, dec) = (month("2026-11"), month("2026-12"));
        let e = nov.end;
        let before = runs(&[(e - 3600, e - 600, "1"), (e + 600, e + 2400, "1")]);
        assert_eq!(owed_unit_seconds(&before, 3600, &nov), Decimal::from(600));
        assert_eq!(owed_unit_seconds(&before, 3600, &dec), Decimal::from(1800));
        let mut after = before.clone();
        after.insert(e - 600, e + 600, Decimal::ONE);
        assert_eq!(consecutive_runs(&after).count(), 1);
        assert_eq!(owed_unit_seconds(&after, 3600, &nov), Decimal::ZERO);
        assert_eq!(owed_unit_seconds(&after, 3600, &dec), Decimal::from(1200));
    }
}
