//! The per-kind rules for changing an account term (issue 10): what a started, drawn or
//! invoiced term may still change ([`check_change`]), and what ending a started subscription
//! leaves ([`ended_subscription_cycles`]). The rules themselves are listed in
//! [`crate::finance::term_changes`].

use crate::common::timestamp::format_secs;
use crate::pricing::pricebook::{Charge, Cycle, ParsedTerm, Subscription};
use crate::pricing::subscriptions::cycle_bounds;
use chrono_tz::Tz;
use rust_decimal::Decimal;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TermConflict(pub String);

fn conflict<T>(message: impl Into<String>) -> Result<T, TermConflict> {
    Err(TermConflict(message.into()))
}

/// Issue 27: a move of an account (its `moves`) takes effect from a month on and never
/// changes a closed period: every move added, changed or removed must start after the last
/// closed period (`closed`: `[start, end)` in `tz`).
fn check_moves(
    old: Option<&ParsedTerm>,
    new: Option<&ParsedTerm>,
    tz: Tz,
    closed: &[(i64, i64)],
) -> Result<(), TermConflict> {
    let moves = |t: Option<&ParsedTerm>| match t {
        Some(ParsedTerm::Account(a)) => a.moves.clone(),
        _ => Vec::new(),
    };
    let (before, after) = (moves(old), moves(new));
    let first_changed = before
        .iter()
        .filter(|m| !after.contains(m))
        .chain(after.iter().filter(|m| !before.contains(m)))
        .map(|m| m.from.as_str())
        .min();
    let Some(from) = first_changed else {
        return Ok(());
    };
    let last_closed = closed
        .iter()
        .filter_map(|&(start, _)| crate::pricing::period::Period::containing(start, tz))
        .map(|p| p.label)
        .max();
    match last_closed {
        Some(last) if last.as_str() >= from => conflict(format!(
            "period {last} is closed: a move from {from} would change it (a move takes effect from a month after the last closed period)"
        )),
        _ => Ok(()),
    }
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

/// What the store knows beside the terms themselves: what issued invoices drew from the old
/// term when it is a credit, and the closed periods (`[start, end)` Unix seconds, any order).
#[derive(Debug, Clone, Copy, Default)]
pub struct Consumed<'a> {
    pub drawn: Decimal,
    pub closed: &'a [(i64, i64)],
    /// Whether the account has an issued invoice (in any region).
    pub invoiced: bool,
}

/// Whether replacing `old` by `new` (None: ending it) is allowed at `now` (Unix seconds).
pub fn check_change(
    old: Option<&ParsedTerm>,
    new: Option<&ParsedTerm>,
    now: i64,
    tz: Tz,
    consumed: Consumed<'_>,
) -> Result<(), TermConflict> {
    // Section 19: an account's timezone sets the bounds of its periods. Once it has an
    // invoice, a new timezone would leave seconds between a closed period and the next
    // unbilled or billed twice: set it before the account's first close. Its place in its
    // organization (section 18: `parent`, `pays`) may change at any time (issue 27: for the
    // periods not yet closed).
    let timezone = |t: Option<&ParsedTerm>| match t {
        Some(ParsedTerm::Account(a)) => a.timezone,
        _ => None,
    };
    if matches!(old.or(new), Some(ParsedTerm::Account(_)))
        && timezone(old) != timezone(new)
        && consumed.invoiced
    {
        return conflict(
            "the account has issued invoices: its timezone sets their periods' bounds, so it may be set only before its first close",
        );
    }
    check_moves(old, new, tz, consumed.closed)?;
    let Some(old) = old else {
        return Ok(());
    };
    let drawn = consumed.drawn;
    match (old, new) {
        (ParsedTerm::Discount(_) | ParsedTerm::Account(_), _) => Ok(()),
        (ParsedTerm::Charge(o), n) => check_charge(o, n, consumed.closed),
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
        (ParsedTerm::Subscription(o), n) if o.start <= now => match n {
            Some(ParsedTerm::Subscription(n)) => check_started_subscription(o, n, now, tz),
            Some(_) => conflict("the subscription has started: it stays a subscription"),
            // Ending is turned into keeping the started cycles by the caller.
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// A started subscription (`o`, started by `now`) replaced by `n`: what was sold (sku,
/// quantity, cycle, start, price, region) stays; `cycles` may not drop below the cycles
/// started; and until it has ended, it may be ended early or later, or not at all, by `end`
/// (no earlier than now: elapsed seconds stay billed), with its `refund` (section 17: with
/// `"prorata"` the unused part of the cycle holding `end` is refunded in the period holding
/// it), and its renewal turned on or off (`auto_renew`). Once its `end` has passed, only
/// `cycles` may change (the refund was given).
fn check_started_subscription(
    o: &Subscription,
    n: &Subscription,
    now: i64,
    tz: Tz,
) -> Result<(), TermConflict> {
    if Sold::from(n) != Sold::from(o) {
        return conflict(
            "the subscription has started: only `cycles`, `end`, `refund` and `auto_renew` may change",
        );
    }
    let ended = o.end.filter(|&e| e <= now);
    if let Some(e) = ended
        && (n.end, n.refund, n.auto_renew) != (o.end, o.refund, o.auto_renew)
    {
        return conflict(format!(
            "the subscription ended at {}: only `cycles` may change",
            format_secs(e)
        ));
    }
    if n.end != o.end
        && let Some(e) = n.end.filter(|&e| e < now)
    {
        return conflict(format!(
            "`end` = {} is before now ({}): a started subscription ends now or later (elapsed seconds stay billed)",
            format_secs(e),
            format_secs(now)
        ));
    }
    let started = started_cycles(o, tz, now);
    if !n.auto_renew && n.cycles < started {
        return conflict(format!(
            "the subscription has started {started} cycles: `cycles` may not go below {started}"
        ));
    }
    Ok(())
}

/// A charge whose `at` lies in a closed period was invoiced: it stays as it is.
fn check_charge(
    old: &Charge,
    new: Option<&ParsedTerm>,
    closed: &[(i64, i64)],
) -> Result<(), TermConflict> {
    let Some(&(start, end)) = closed
        .iter()
        .find(|(start, end)| *start <= old.at && old.at < *end)
    else {
        return Ok(());
    };
    let period = format!(
        "the charge's period [{}, {}) is closed: it was invoiced",
        format_secs(start),
        format_secs(end)
    );
    match new {
        // The same charge written differently ("800" for "800.00") changes nothing.
        Some(ParsedTerm::Charge(n))
            if Charge {
                index: old.index,
                ..n.clone()
            } == *old =>
        {
            Ok(())
        }
        Some(_) => conflict(format!(
            "{period}; it may not change (a correction is a credit or a new charge)"
        )),
        None => conflict(format!(
            "{period}; it cannot be ended (a refund is a credit)"
        )),
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

impl From<&crate::pricing::pricebook::Reservation> for Reservation2 {
    fn from(r: &crate::pricing::pricebook::Reservation) -> Self {
        Reservation2 {
            sku: r.sku.clone(),
            quantity: r.quantity,
            from: r.from,
            to: r.to,
            rate_per_hour: r.rate_per_hour,
        }
    }
}

/// What a subscription sold: the fields a started one keeps.
#[derive(PartialEq)]
struct Sold<'a> {
    sku: &'a str,
    quantity: Decimal,
    cycle: Cycle,
    start: i64,
    price: Decimal,
    region: Option<&'a str>,
}

impl<'a> From<&'a Subscription> for Sold<'a> {
    fn from(s: &'a Subscription) -> Self {
        Sold {
            sku: &s.sku,
            quantity: s.quantity,
            cycle: s.cycle,
            start: s.start,
            price: s.price,
            region: s.region.as_deref(),
        }
    }
}
