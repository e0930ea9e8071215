//! The per-resource minimum charge: billing-semantics.md section 4.6.
//!
//! An on-demand resource (account, lease, resource, sku) of an sku with `minimum_seconds`
//! whose seconds covered by its events, over *all* its events (not only this period's),
//! number fewer than `minimum_seconds`, owes `(minimum_seconds - covered) x its largest
//! quantity` unit-seconds at the sku's first-tier (or plain) rate, with no multiplier, in the
//! period holding its first covered second.
//!
//! Choice: "covered" here means covered by the resource's usage events (its ledger seconds),
//! not covered by a reservation (section 4.2's `C(s)`), as worked example 1 reads.

use crate::ledger::Runs;
use crate::pricing::period::Period;
use rust_decimal::Decimal;

/// Unit-seconds the resource owes in `period`, if any.
pub fn owed_unit_seconds(runs: &Runs, minimum_seconds: i64, period: &Period) -> Option<Decimal> {
    let first = runs.first_second()?;
    if !period.contains(first) {
        return None;
    }
    let covered = runs.covered_seconds();
    if covered >= minimum_seconds {
        return None;
    }
    Some(Decimal::from(minimum_seconds - covered) * runs.max_quantity()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Run;

    fn period() -> Period {
        Period::month("2026-11", chrono_tz::Asia::Shanghai).unwrap()
    }

    fn runs(spans: &[(i64, i64, &str)]) -> Runs {
        Runs::from_runs(spans.iter().map(|&(from, to, q)| Run {
            from,
            to,
            quantity: q.parse().unwrap(),
        }))
    }

    #[test]
    fn a_20s_lease_with_a_60s_minimum_owes_40_more() {
        let p = period();
        let r = runs(&[(p.start + 100, p.start + 120, "1")]);
        assert_eq!(owed_unit_seconds(&r, 60, &p), Some(Decimal::from(40)));
    }

    #[test]
    fn owed_seconds_use_the_largest_quantity_and_all_events() {
        let p = period();
        let r = runs(&[
            (p.start + 100, p.start + 110, "0.25"),
            (p.start + 200, p.start + 210, "0.5"),
        ]);
        assert_eq!(owed_unit_seconds(&r, 60, &p), Some(Decimal::from(20))); // 40 x 0.5
        // Seconds in the next period count towards the minimum, and it is billed here.
        let spanning = runs(&[(p.end - 30, p.end + 30, "1")]);
        assert_eq!(owed_unit_seconds(&spanning, 60, &p), None);
        let short = runs(&[(p.end - 10, p.end + 10, "1")]);
        assert_eq!(owed_unit_seconds(&short, 60, &p), Some(Decimal::from(40)));
        // ... and never in the period after it.
        let next = Period::month("2026-12", chrono_tz::Asia::Shanghai).unwrap();
        assert_eq!(owed_unit_seconds(&short, 60, &next), None);
    }
}
