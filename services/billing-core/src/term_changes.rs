//! Which changes to an account term are allowed (issue 10): only what has not started or not
//! been consumed may change. Pure: "now" and what a credit has given are passed in.
//!
//! - Reservation: before its `from`, anything. Once started only `to` may change, to no
//!   earlier than now (elapsed reserved seconds stay billed); it cannot be ended (DELETE).
//! - Discount: may change or end at any time; it applies to the periods not yet closed (like a
//!   price book upload), an issued invoice never changes.
//! - Credit: until an issued invoice drew from it, anything. Once drawn only `amount` may
//!   change, to no less than what was drawn; it cannot be ended.
//! - Package: before its `from`, anything. Once started (`from <= now`) only `to` may be
//!   extended and `hours` increased (consumed seconds stay consumed); it cannot be ended.
//! - Subscription: before its `start`, anything. Once started only `cycles` may change, to no
//!   fewer than the cycles started by now (a renewal adds cycles); ending it keeps the started
//!   cycles and drops the future ones (see [`ended_subscription_cycles`]).
//!
//! A new term (no old version) is always allowed, whatever its dates.

use crate::pricebook::{Cycle, ParsedTerm, Subscription};
use crate::subscriptions::cycle_bounds;
use chrono_tz::Tz;
use rust_decimal::Decimal;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TermConflict(pub String);

fn conflict<T>(message: impl Into<String>) -> Result<T, TermConflict> {
    Err(TermConflict(message.into()))
}

/// Cycles of `sub` whose start is at or before `now`.
pub fn started_cycles(sub: &Subscription, tz: Tz, now: i64) -> u32 {
    let bounds = cycle_bounds(sub, tz);
    bounds[..sub.cycles as usize]
        .iter()
        .filter(|&&b| b <= now)
        .count() as u32
}

/// What ending a subscription leaves: `Some(cycles)` started so far (the term stays with only
/// them), `None` when none started (the term goes).
pub fn ended_subscription_cycles(sub: &Subscription, tz: Tz, now: i64) -> Option<u32> {
    match started_cycles(sub, tz, now) {
        0 => None,
        n => Some(n),
    }
}

/// Whether replacing `old` by `new` (None: ending it) is allowed at `now` (Unix seconds).
/// `drawn` is what issued invoices drew from `old` when it is a credit.
pub fn check_change(
    old: Option<&ParsedTerm>,
    new: Option<&ParsedTerm>,
    now: i64,
    tz: Tz,
    drawn: Decimal,
) -> Result<(), TermConflict> {
    let Some(old) = old else {
        return Ok(());
    };
    match (old, new) {
        (ParsedTerm::Discount { .. }, _) => Ok(()),
        (ParsedTerm::Reservation(o), n) if o.from <= now => match n {
            Some(ParsedTerm::Reservation(n)) => {
                let same = Reservation2 {
                    to: 0,
                    ..Reservation2::from(o)
                } == Reservation2 {
                    to: 0,
                    ..Reservation2::from(n)
                };
                if !same {
                    return conflict("the reservation has started: only `to` may change");
                }
                if n.to < now {
                    return conflict("the reservation has started: `to` may not be before now");
                }
                Ok(())
            }
            _ => conflict("the reservation has started: it cannot be ended, only its `to` moved"),
        },
        (ParsedTerm::Credit(o), n) if drawn > Decimal::ZERO => match n {
            Some(ParsedTerm::Credit(n)) => {
                if (n.from, n.to, &n.id) != (o.from, o.to, &o.id) {
                    return conflict(format!(
                        "issued invoices drew {drawn} from this credit: only `amount` may change"
                    ));
                }
                if n.amount < drawn {
                    return conflict(format!(
                        "issued invoices drew {drawn} from this credit: `amount` may not go below it"
                    ));
                }
                Ok(())
            }
            _ => conflict(format!(
                "issued invoices drew {drawn} from this credit: it cannot be ended"
            )),
        },
        (ParsedTerm::Package(o), n) if o.from <= now => match n {
            Some(ParsedTerm::Package(n))
                if (&n.sku, n.from, n.price) == (&o.sku, o.from, o.price)
                    && n.to >= o.to
                    && n.unit_seconds >= o.unit_seconds =>
            {
                Ok(())
            }
            Some(_) => {
                conflict("the package has started: only `to` may be extended and `hours` increased")
            }
            None => conflict(
                "the package has started: its consumed seconds stay consumed, it cannot be ended",
            ),
        },
        (ParsedTerm::Subscription(o), n) if o.start <= now => {
            let started = started_cycles(o, tz, now);
            match n {
                Some(ParsedTerm::Subscription(n))
                    if Sub2::from(n) == Sub2::from(o) && n.cycles >= started =>
                {
                    Ok(())
                }
                Some(ParsedTerm::Subscription(n)) if Sub2::from(n) == Sub2::from(o) => {
                    conflict(format!(
                        "the subscription has started {started} cycles: `cycles` may not go below {started}"
                    ))
                }
                Some(_) => conflict("the subscription has started: only `cycles` may change"),
                // Ending is turned into keeping the started cycles by the caller.
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// A reservation's fields that a started one keeps (with `to` zeroed to compare the rest).
#[derive(PartialEq)]
struct Reservation2 {
    sku: String,
    quantity: Decimal,
    from: i64,
    to: i64,
    rate_per_hour: Decimal,
}

impl From<&crate::pricebook::Reservation> for Reservation2 {
    fn from(r: &crate::pricebook::Reservation) -> Self {
        Reservation2 {
            sku: r.sku.clone(),
            quantity: r.quantity,
            from: r.from,
            to: r.to,
            rate_per_hour: r.rate_per_hour,
        }
    }
}

/// A subscription's fields other than `cycles`.
#[derive(PartialEq)]
struct Sub2<'a> {
    sku: &'a str,
    quantity: Decimal,
    cycle: Cycle,
    start: i64,
    price: Decimal,
}

impl<'a> From<&'a Subscription> for Sub2<'a> {
    fn from(s: &'a Subscription) -> Self {
        Sub2 {
            sku: &s.sku,
            quantity: s.quantity,
            cycle: s.cycle,
            start: s.start,
            price: s.price,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weekly(cycles: u32) -> ParsedTerm {
        ParsedTerm::Subscription(Subscription {
            index: 0,
            account: "acme".into(),
            id: "s".into(),
            sku: "gpu".into(),
            quantity: Decimal::ONE,
            cycle: Cycle::Week,
            start: 1_000_000,
            cycles,
            price: Decimal::from(100),
        })
    }

    #[test]
    fn a_started_weekly_subscription_loses_only_cycles_not_started() {
        // Day 9 of the subscription: cycles 0 and 1 have started.
        let now = 1_000_000 + 9 * 86_400;
        let tz = Tz::UTC;
        let z = Decimal::ZERO;
        assert!(check_change(Some(&weekly(4)), Some(&weekly(2)), now, tz, z).is_ok());
        assert!(check_change(Some(&weekly(4)), Some(&weekly(6)), now, tz, z).is_ok());
        assert!(check_change(Some(&weekly(4)), Some(&weekly(1)), now, tz, z).is_err());
        let ParsedTerm::Subscription(s) = weekly(4) else {
            unreachable!()
        };
        assert_eq!(ended_subscription_cycles(&s, tz, now), Some(2));
        assert_eq!(ended_subscription_cycles(&s, tz, 999_999), None);
        // Before the start anything goes.
        assert!(check_change(Some(&weekly(4)), None, 999_999, tz, z).is_ok());
    }
}
