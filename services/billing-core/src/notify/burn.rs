//! The burn rate: what an account spends per second right now, for forecasts and hours left.
//!
//! The rule (also in [`crate::choices::notify`]): the per-second cost of the usage **still
//! running** at `now`, at list rates: for every usage key that counts as running
//! ([`crate::quota::is_running`]: its last run ended within
//! [`crate::quota::RUNNING_WINDOW_S`]), its last quantity times its sku's on-demand rate per
//! unit-hour (the state rate of section 8 when its lease is in a priced state), over 3600.
//! Packages, reservations, discounts and credits are not taken off: the burn rate errs on the
//! side of warning early. The store computes the pairs from the ledger it already reads for
//! `max_concurrent`.

use rust_decimal::Decimal;

/// One running usage key: its quantity (units, GB) and the rate per unit-hour it bills at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub quantity: Decimal,
    pub rate_per_hour: Decimal,
}

/// `Σ quantity x rate_per_hour / 3600` over the running keys: cost per second. Negative
/// inputs (which validation refuses upstream) count as zero.
pub fn burn_rate_per_second(running: &[Running]) -> Decimal {
    let per_hour: Decimal = running
        .iter()
        .map(|r| r.quantity.max(Decimal::ZERO) * r.rate_per_hour.max(Decimal::ZERO))
        .sum();
    per_hour / Decimal::from(3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_gpus_at_36_an_hour_and_a_disk_burn_nine_cents_a_second() {
        // 8 x 36.00 = 288.00 per hour, plus 500 GB x 0.0000 (storage waived) and a stopped
        // lease's 200 GB at the storage rate 0.18 per GB-hour = 36.00: 324.00 per hour,
        // 324 / 3600 = 0.09 per second.
        let running = [
            Running {
                quantity: Decimal::from(8),
                rate_per_hour: Decimal::from(36),
            },
            Running {
                quantity: Decimal::from(500),
                rate_per_hour: Decimal::ZERO,
            },
            Running {
                quantity: Decimal::from(200),
                rate_per_hour: Decimal::new(18, 2),
            },
        ];
        assert_eq!(burn_rate_per_second(&running), Decimal::new(9, 2));
        assert_eq!(burn_rate_per_second(&[]), Decimal::ZERO);
    }
}
