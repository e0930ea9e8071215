//! Rounding: once per line, to the currency's 2 minor digits, half away from zero
//! (billing-semantics.md section 5).

use rust_decimal::{Decimal, RoundingStrategy};

/// Minor-unit digits of every amount.
pub const MINOR_DIGITS: u32 = 2;

/// `round(x, 2)` half away from zero, always carrying exactly 2 decimals (`0` -> `0.00`).
pub fn round_amount(x: Decimal) -> Decimal {
    let mut r = x.round_dp_with_strategy(MINOR_DIGITS, RoundingStrategy::MidpointAwayFromZero);
    r.rescale(MINOR_DIGITS);
    r
}

/// `unit_seconds x rate_per_hour x multiplier / 3600`, rounded once.
pub fn usage_amount(unit_seconds: Decimal, rate_per_hour: Decimal, multiplier: Decimal) -> Decimal {
    round_amount(unit_seconds * rate_per_hour * multiplier / Decimal::from(3600))
}

/// A quantity as shown on a line: exact, without trailing zeros (`2250.00` -> `2250`).
pub fn show_quantity(x: Decimal) -> Decimal {
    x.normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn rounds_half_away_from_zero_once() {
        assert_eq!(round_amount(d("0.005")).to_string(), "0.01");
        assert_eq!(round_amount(d("-0.005")).to_string(), "-0.01");
        assert_eq!(round_amount(d("0.0049999")).to_string(), "0.00");
        assert_eq!(round_amount(d("45.6708")).to_string(), "45.67");
        assert_eq!(round_amount(Decimal::ZERO).to_string(), "0.00");
        assert_eq!(round_amount(d("7")).to_string(), "7.00");
    }

    #[test]
    fn usage_amount_of_worked_1_lines() {
        // 20 s in tier 1 at 20.00: 0.111.. -> 0.11; 40 s minimum at 24.00: 0.266.. -> 0.27
        assert_eq!(
            usage_amount(d("20"), d("20.00"), Decimal::ONE).to_string(),
            "0.11"
        );
        assert_eq!(
            usage_amount(d("40"), d("24.00"), Decimal::ONE).to_string(),
            "0.27"
        );
        assert_eq!(
            usage_amount(d("3600"), d("24.00"), d("0.70")).to_string(),
            "16.80"
        );
        // 45 s at 1.00/h = 0.0125 exactly: a midpoint, rounds away from zero.
        assert_eq!(
            usage_amount(d("45"), d("1.00"), Decimal::ONE).to_string(),
            "0.01"
        );
        assert_eq!(
            usage_amount(d("54"), d("1.00"), Decimal::ONE).to_string(),
            "0.02"
        );
    }
}
