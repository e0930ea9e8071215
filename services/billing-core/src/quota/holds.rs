//! Holds of an authorization (issue 11): the rate a hold reserves at, its amount, its life
//! and the largest one the engine takes.

use crate::pricing::pricebook::PriceBook;
use rust_decimal::{Decimal, RoundingStrategy};

/// The rate a hold on `sku` reserves at, per unit-hour: the sku's first-tier (or plain)
/// on-demand rate ([`crate::pricing::pricebook::Sku::first_rate`]), whatever the lease will run as
/// (spot rates, off-peak multipliers and later tiers are not looked at). None when the book
/// has no such sku or the sku has no on-demand rate (the store then answers with its unknown
/// sku error). Used by billing-store `authorize.rs`.
pub fn hold_rate(book: &PriceBook, sku: &str) -> Option<Decimal> {
    book.skus.get(sku).and_then(|s| s.first_rate())
}

/// Default life of a hold without `ttl_seconds`, in seconds (an authorization or an
/// extension).
pub const DEFAULT_HOLD_TTL_S: i64 = 300;
/// Longest life of a hold per call, in seconds (extend to keep it longer).
pub const MAX_HOLD_TTL_S: i64 = 86_400;

/// A requested hold life out of `1..=`[`MAX_HOLD_TTL_S`] seconds: the value asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtlOutOfRange(pub i64);

/// A hold's life in milliseconds from a requested `ttl_seconds`: [`DEFAULT_HOLD_TTL_S`] when
/// none is given, else the request when it is 1 to [`MAX_HOLD_TTL_S`] seconds, else
/// [`TtlOutOfRange`] (the API answers 422 with its own message). Used by billing-api
/// `quota.rs` for `POST /v1/authorize` and `POST /v1/holds/{id}/extend`.
pub fn hold_ttl_ms(ttl_seconds: Option<i64>) -> Result<i64, TtlOutOfRange> {
    let ttl = ttl_seconds.unwrap_or(DEFAULT_HOLD_TTL_S);
    if !(1..=MAX_HOLD_TTL_S).contains(&ttl) {
        return Err(TtlOutOfRange(ttl));
    }
    Ok(ttl * 1000)
}

/// A hold's amount: `quantity x seconds` at `rate` per unit-hour, rounded **up** to the cent,
/// so a hold never reserves less than the usage it stands for (and a priced hold is never
/// 0.00).
pub fn hold_amount(quantity: Decimal, seconds: i64, rate_per_hour: Decimal) -> Decimal {
    let mut a = (quantity * Decimal::from(seconds) * rate_per_hour / Decimal::from(3600))
        .round_dp_with_strategy(2, RoundingStrategy::AwayFromZero);
    a.rescale(2);
    a
}

/// The longest hold `POST /v1/authorize` takes: 30 days of usage.
pub const MAX_HOLD_SECONDS: i64 = 30 * 86_400;

/// The largest quantity one hold may reserve (units of the sku).
pub const MAX_HOLD_QUANTITY: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

/// Whether a hold request's size is one the engine takes: a quantity above 0 and at most
/// [`MAX_HOLD_QUANTITY`], for 1 to [`MAX_HOLD_SECONDS`] seconds. The error names the field
/// and its value.
pub fn check_hold_size(quantity: Decimal, seconds: i64) -> Result<(), String> {
    if quantity <= Decimal::ZERO || quantity > MAX_HOLD_QUANTITY {
        return Err(format!(
            "quantity = {quantity}: must be above 0 and at most {MAX_HOLD_QUANTITY} units"
        ));
    }
    if !(1..=MAX_HOLD_SECONDS).contains(&seconds) {
        return Err(format!(
            "seconds = {seconds}: must be 1 to {MAX_HOLD_SECONDS} (30 days)"
        ));
    }
    Ok(())
}
