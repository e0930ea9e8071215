//! Egress: billing-semantics.md sections 2 and 4.7.
//!
//! The bytes of all distinct events (by identity) of a dest whose `time` is in the period sum;
//! `GB = bytes / 10^9` exactly, walked through the dest's graduated tiers, one line per tier.

use crate::common::money::{round_amount, show_quantity};
use crate::ledger::EgressRecord;
use crate::pricing::invoice::{Component, Line, Unit};
use crate::pricing::period::Period;
use crate::pricing::tiers::{Tier, split_graduated};
use rust_decimal::Decimal;

/// Total bytes of `records` inside the period.
pub fn bytes_in(records: &[EgressRecord], period: &Period) -> u128 {
    records
        .iter()
        .filter(|r| period.contains(r.time.secs))
        .map(|r| r.bytes as u128)
        .sum()
}

/// `bytes / 10^9` exactly; None beyond what a `Decimal` holds (~7.9e19 GB).
pub fn gigabytes(bytes: u128) -> Option<Decimal> {
    Decimal::try_from_i128_with_scale(i128::try_from(bytes).ok()?, 9).ok()
}

/// One line per tier that holds any of the `gb`.
pub fn egress_lines(dest: &str, tiers: &[Tier], gb: Decimal) -> Vec<Line> {
    let mut lines = Vec::new();
    split_graduated(tiers, Decimal::ZERO, gb, |tier, part| {
        lines.push(Line {
            component: Component::Egress,
            sku: None,
            dest: Some(dest.to_string()),
            tier,
            multiplier: None,
            price: None,
            package: None,
            subscription: None,
            charge: None,
            description: None,
            quantity: show_quantity(part),
            unit: Unit::Gb,
            amount: round_amount(part * tiers[tier].rate),
            compensation: None,
            refund: None,
            seq: 0,
        })
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn egress_150_gb_through_a_100_gb_free_tier() {
        let tiers = [
            Tier {
                up_to: Some(d("100")),
                rate: d("0.00"),
            },
            Tier {
                up_to: None,
                rate: d("0.80"),
            },
        ];
        let gb = gigabytes(150_000_000_000).unwrap();
        let lines = egress_lines("internet", &tiers, gb);
        let got: Vec<(usize, String, String)> = lines
            .iter()
            .map(|l| (l.tier, l.quantity.to_string(), l.amount.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                (0, "100".into(), "0.00".into()),
                (1, "50".into(), "40.00".into())
            ]
        );
    }

    #[test]
    fn gigabytes_are_exact() {
        assert_eq!(gigabytes(1).unwrap().to_string(), "0.000000001");
        assert_eq!(gigabytes(123_456_789).unwrap(), d("0.123456789"));
    }
}
