//! Reservations: billing-semantics.md section 4.2.
//!
//! Reservations of one account and sku are pooled: `R(s)` is the sum of the quantities of
//! those active at `s`, and covers on-demand usage up to it. Each reservation also bills a
//! commitment for its part of the period, used or not.

use crate::common::money::usage_amount;
use crate::pricing::invoice::{Component, Line};
use crate::pricing::period::Period;
use crate::pricing::pricebook::Reservation;
use rust_decimal::Decimal;

/// `[from, to) ∩ period` of a reservation, if not empty.
pub fn active_span(r: &Reservation, period: &Period) -> Option<(i64, i64)> {
    let (a, b) = (r.from.max(period.start), r.to.min(period.end));
    (a < b).then_some((a, b))
}

/// `quantity x |[from,to) ∩ period| seconds x rate_per_hour / 3600`.
pub fn commitment_line(r: &Reservation, period: &Period) -> Option<Line> {
    let (a, b) = active_span(r, period)?;
    let unit_seconds = r.quantity * Decimal::from(b - a);
    let mut line = Line::usage(
        Component::ReservedCommitment,
        &r.sku,
        0,
        unit_seconds,
        usage_amount(unit_seconds, r.rate_per_hour, Decimal::ONE),
    );
    line.seq = r.index;
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reservation(from: i64, to: i64) -> Reservation {
        Reservation {
            index: 0,
            account: "acme".into(),
            sku: "gpu.h100".into(),
            quantity: Decimal::from(2),
            from,
            to,
            rate_per_hour: "15.00".parse().unwrap(),
            region: None,
        }
    }

    #[test]
    fn commitment_of_2_gpus_for_a_day_at_15_is_720() {
        let p = Period::month("2026-11", chrono_tz::Asia::Shanghai).unwrap();
        let l = commitment_line(&reservation(p.start + 86_400, p.start + 2 * 86_400), &p).unwrap();
        assert_eq!(l.quantity.to_string(), "172800");
        assert_eq!(l.amount.to_string(), "720.00");
    }

    #[test]
    fn commitment_is_prorated_to_the_period() {
        // Reserved from mid-October to mid-November: only the November half is billed here.
        let p = Period::month("2026-11", chrono_tz::Asia::Shanghai).unwrap();
        let r = reservation(p.start - 15 * 86_400, p.start + 15 * 86_400);
        let l = commitment_line(&r, &p).unwrap();
        assert_eq!(l.quantity, Decimal::from(2 * 15 * 86_400));
        assert_eq!(l.amount.to_string(), "10800.00"); // 2 x 360 h x 15
        assert!(commitment_line(&reservation(p.end, p.end + 10), &p).is_none());
    }
}
