//! Tiers: graduated and volume (billing-semantics.md section 4.4, and 4.7 for egress).
//!
//! Bounds are cumulative and expressed here in the unit being walked (unit-seconds for GPU
//! usage, i.e. `up_to_hours x 3600`; GB for egress). Choice where the page is silent: a last
//! tier that carries a bound still takes everything beyond it (there is nowhere else to go).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TierMode {
    /// Each unit is priced in the tier its cumulative position falls in.
    #[default]
    Graduated,
    /// The period's total picks one tier for every unit.
    Volume,
}

/// One price tier: cumulative upper bound (None = unbounded) and its rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tier {
    pub up_to: Option<Decimal>,
    pub rate: Decimal,
}

/// Splits `amount` units that come after `already` cumulative units across graduated tiers,
/// calling `part(tier_index, units)` for each non-empty part, in tier order.
pub fn split_graduated(
    tiers: &[Tier],
    already: Decimal,
    amount: Decimal,
    mut part: impl FnMut(usize, Decimal),
) {
    let mut position = already;
    let mut left = amount;
    let last = tiers.len().saturating_sub(1);
    for (i, tier) in tiers.iter().enumerate() {
        if left <= Decimal::ZERO {
            break;
        }
        let take = match tier.up_to {
            Some(bound) if i < last => {
                if position >= bound {
                    continue;
                }
                left.min(bound - position)
            }
            _ => left,
        };
        part(i, take);
        position += take;
        left -= take;
    }
}

/// Volume tiers: the first tier whose bound is at or above `total` (the last if none).
pub fn volume_tier(tiers: &[Tier], total: Decimal) -> usize {
    tiers
        .iter()
        .position(|t| t.up_to.is_some_and(|b| b >= total))
        .unwrap_or(tiers.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn tiers(spec: &[(Option<&str>, &str)]) -> Vec<Tier> {
        spec.iter()
            .map(|(b, r)| Tier {
                up_to: b.map(d),
                rate: d(r),
            })
            .collect()
    }

    fn split(t: &[Tier], already: &str, amount: &str) -> Vec<(usize, Decimal)> {
        let mut v = vec![];
        split_graduated(t, d(already), d(amount), |i, x| v.push((i, x)));
        v
    }

    #[test]
    fn graduated_boundary_inside_one_seconds_units() {
        // Tier 0 holds 2 unit-hours = 7,200 unit-seconds. 7,199 are used; the next second
        // has 3 GPUs: 1 unit-second fills tier 0, 2 go to tier 1.
        let t = tiers(&[(Some("7200"), "24.00"), (None, "20.00")]);
        assert_eq!(split(&t, "7199", "3"), vec![(0, d("1")), (1, d("2"))]);
        assert_eq!(split(&t, "7200", "3"), vec![(1, d("3"))]);
        assert_eq!(split(&t, "0", "7200"), vec![(0, d("7200"))]);
    }

    #[test]
    fn graduated_spans_several_tiers_at_once() {
        let t = tiers(&[(Some("10"), "3"), (Some("20"), "2"), (None, "1")]);
        assert_eq!(
            split(&t, "5", "30"),
            vec![(0, d("5")), (1, d("10")), (2, d("15"))]
        );
    }

    #[test]
    fn a_bounded_last_tier_takes_the_rest() {
        let t = tiers(&[(Some("10"), "3"), (Some("20"), "2")]);
        assert_eq!(split(&t, "15", "30"), vec![(1, d("30"))]);
    }

    #[test]
    fn volume_picks_the_first_tier_holding_the_total() {
        let t = tiers(&[
            (Some("360000"), "24"),
            (Some("3600000"), "21"),
            (None, "18"),
        ]);
        assert_eq!(volume_tier(&t, d("360000")), 0); // exactly 100 h: still tier 0
        assert_eq!(volume_tier(&t, d("360001")), 1);
        assert_eq!(volume_tier(&t, d("9999999")), 2);
    }
}
