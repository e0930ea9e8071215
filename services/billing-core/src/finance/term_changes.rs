//! Which changes to an account term are allowed (issue 10): only what has not started or not
//! been consumed may change. Pure: "now", what a credit has given and the closed periods are
//! passed in.
//!
//! - Reservation: before its `from`, anything. Once started only `to` may change, to no
//!   earlier than now (elapsed reserved seconds stay billed); it cannot be ended (DELETE).
//! - Discount: may change or end at any time; it applies to the periods not yet closed (like a
//!   price book upload), an issued invoice never changes. A dated one (section 16's `from`)
//!   also reaches a closed period it is dated into, as an adjustment ([`dated_into`]).
//! - Credit: until an issued invoice drew from it, anything. Once drawn only `amount` may
//!   change, to no less than what was drawn; it cannot be ended.
//! - Package: before its `from`, anything. Once started (`from <= now`) only `to` may be
//!   extended and `hours` increased (consumed seconds stay consumed); it cannot be ended.
//! - Subscription: before its `start`, anything. Once started, what it sold (sku, quantity,
//!   cycle, start, price, region) stays; `cycles` may change to no fewer than the cycles
//!   started by now (a renewal adds cycles); until its `end` has passed it may be ended early
//!   (section 17: `end` no earlier than now, with `refund = "prorata"` the unused part of the
//!   cycle is refunded), its end moved or dropped, its renewal turned on or off
//!   ([`check_started_subscription`]). DELETE keeps the started cycles and drops the future
//!   ones (see [`ended_subscription_cycles`]).
//! - Charge (section 20): while the period holding its `at` is open, anything (it is billed
//!   at that period's close). Once that period is closed it was invoiced: it may neither
//!   change nor be ended (a correction is a credit or a new charge). Which periods are closed
//!   is the store's to say ([`check_change`]'s `closed`).
//!
//! A new term (no old version) is always allowed, whatever its dates.
//!
//! Re-rating a closed period (issue 24.1, [`terms_for_closed_period`]): it keeps the terms it
//! was closed with; a later change reaches it only when the term is dated into it.

use crate::common::timestamp::format_secs;
use crate::pricing::pricebook::{
    AccountTerm, Charge, Cycle, ParsedTerm, PriceBook, Subscription, TermKind,
};
use crate::pricing::subscriptions::cycle_bounds;
use chrono_tz::Tz;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

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

/// Whether `term` is dated into the period `[start, end)` (issue 24.1): it names the instant
/// it starts at, before `end`, and it lasts past `start`. A reservation, a package and a
/// subscription always name their start (a subscription lasts to the end of its last cycle);
/// a credit only with `from` (a credit with only `to`, or none, stands for "from whenever",
/// not for a period); a charge when its `at` is in the period; a discount, like a credit,
/// only with `from` (section 16's dates). A term the period's price book
/// version does not accept (an sku it lacks) is dated into nothing: it stays out of it anyway.
pub fn dated_into(book: &PriceBook, term: &AccountTerm, (start, end): (i64, i64)) -> bool {
    match book.parse_account_term(term) {
        Ok(ParsedTerm::Reservation(r)) => r.from < end && r.to > start,
        Ok(ParsedTerm::Package(p)) => p.from < end && p.to > start,
        Ok(ParsedTerm::Credit(c)) => {
            c.from.is_some_and(|f| f < end) && c.to.is_none_or(|t| t > start)
        }
        Ok(ParsedTerm::Subscription(s)) => {
            let last = cycle_bounds(&s, book.timezone)
                .last()
                .copied()
                .unwrap_or(s.start);
            s.start < end && last > start
        }
        Ok(ParsedTerm::Charge(c)) => start <= c.at && c.at < end,
        // Undated: a closed period keeps the timezone it was closed with.
        Ok(ParsedTerm::Account(_)) => false,
        Ok(ParsedTerm::Discount(d)) => {
            d.from.is_some_and(|f| f < end) && d.to.is_none_or(|t| t > start)
        }
        Err(_) => false,
    }
}

/// The account terms that rate a closed period `[start, end)` again (issue 24.1), from the
/// terms as they stood when it closed (`at_close`) and as they are now (`current`), both
/// sorted by (account, kind, term id) and each term once. A closed period keeps the terms it
/// was closed with; a term that changed since (set, changed or ended) takes its current
/// version (or goes) only when its version at the close or its current one is dated into the
/// period ([`dated_into`]): then the difference is an adjustment at the next close, like late
/// usage. An undated term set or changed after the close never reaches the period. With no
/// change since the close this is `at_close`. Sorted like the inputs.
pub fn terms_for_closed_period(
    book: &PriceBook,
    period: (i64, i64),
    at_close: &[AccountTerm],
    current: &[AccountTerm],
) -> Vec<AccountTerm> {
    type Key<'a> = (&'a str, TermKind, &'a str);
    let then: BTreeMap<Key, &AccountTerm> = at_close
        .iter()
        .map(|t| ((t.account.as_str(), t.kind, t.term_id.as_str()), t))
        .collect();
    let now: BTreeMap<Key, &AccountTerm> = current
        .iter()
        .map(|t| ((t.account.as_str(), t.kind, t.term_id.as_str()), t))
        .collect();
    let mut keys: Vec<Key> = then.keys().chain(now.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<AccountTerm> = Vec::with_capacity(keys.len());
    for k in keys {
        let (old, new) = (then.get(&k).copied(), now.get(&k).copied());
        let kept = if old == new {
            old
        } else {
            let reaches = old.is_some_and(|t| dated_into(book, t, period))
                || new.is_some_and(|t| dated_into(book, t, period));
            if reaches { new } else { old }
        };
        out.extend(kept.cloned());
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK: &str =
        "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu\"]\nrate_per_hour = \"24.00\"\n";
    /// 2026-11-01T00:00:00Z and 2026-12-01T00:00:00Z.
    const NOV: (i64, i64) = (1_793_491_200, 1_796_083_200);

    fn term(kind: TermKind, id: &str, body: serde_json::Value) -> AccountTerm {
        AccountTerm {
            account: "acme".into(),
            kind,
            term_id: id.into(),
            fields: body.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn a_closed_period_keeps_its_terms_unless_a_change_is_dated_into_it() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let discount = term(
            TermKind::Discounts,
            "d",
            serde_json::json!({"percent": "10"}),
        );
        let undated = term(
            TermKind::Credits,
            "c0",
            serde_json::json!({"amount": "5.00"}),
        );
        let only_to = term(
            TermKind::Credits,
            "c1",
            serde_json::json!({"amount": "5.00", "to": "2027-01-01T00:00:00Z"}),
        );
        let nov = term(
            TermKind::Credits,
            "c2",
            serde_json::json!({"amount": "5.00", "from": "2026-11-01T00:00:00Z"}),
        );
        let dec = term(
            TermKind::Credits,
            "c3",
            serde_json::json!({"amount": "5.00", "from": "2026-12-01T00:00:00Z"}),
        );
        // Set after the close: only the credit dated into November reaches it.
        // Sorted by (account, kind, term id): discounts before credits.
        let current = vec![
            discount.clone(),
            undated.clone(),
            only_to.clone(),
            nov.clone(),
            dec.clone(),
        ];
        assert_eq!(
            terms_for_closed_period(&book, NOV, &[], &current),
            vec![nov.clone()]
        );
        // Nothing changed since the close: the terms it was closed with.
        assert_eq!(
            terms_for_closed_period(&book, NOV, &current, &current),
            current
        );
        // Ended after the close: an undated discount stays, a November credit goes.
        assert_eq!(
            terms_for_closed_period(&book, NOV, &[nov.clone(), discount.clone()], &[]),
            vec![discount.clone()]
        );
        // Changed after the close: the undated discount keeps its old percent.
        let more = term(
            TermKind::Discounts,
            "d",
            serde_json::json!({"percent": "30"}),
        );
        assert_eq!(
            terms_for_closed_period(&book, NOV, std::slice::from_ref(&discount), &[more]),
            vec![discount]
        );
        // A reservation from mid-November reaches it; one from December does not.
        let res = |from: &str| {
            term(
                TermKind::Reservations,
                "r",
                serde_json::json!({"sku": "gpu", "quantity": "1", "from": from,
                    "to": "2027-01-01T00:00:00Z", "rate_per_hour": "10.00"}),
            )
        };
        let mid = res("2026-11-15T00:00:00Z");
        assert_eq!(
            terms_for_closed_period(&book, NOV, &[], std::slice::from_ref(&mid)),
            vec![mid]
        );
        assert!(
            terms_for_closed_period(&book, NOV, &[], &[res("2026-12-01T00:00:00Z")]).is_empty()
        );
    }

    fn charge(at: i64, amount: i64) -> ParsedTerm {
        ParsedTerm::Charge(Charge {
            index: 0,
            account: "acme".into(),
            id: "migration".into(),
            description: None,
            amount: Decimal::from(amount),
            at,
            region: None,
        })
    }

    /// A charge dated 2026-11-20 in a closed November was invoiced: it may neither change nor
    /// be ended, whatever the clock says; the same charge again is no change. While November
    /// is open (only October closed) anything goes, even after its `at`.
    #[test]
    fn a_charge_in_a_closed_period_stays_as_it_was_invoiced() {
        let at = NOV.0 + 19 * 86_400;
        let now = NOV.1 + 86_400;
        let tz = Tz::UTC;
        let oct = (NOV.0 - 31 * 86_400, NOV.0);
        let closed = [oct, NOV];
        let facts = Consumed {
            drawn: Decimal::ZERO,
            closed: &closed,
            invoiced: false,
        };
        let old = charge(at, 800);
        let refused = check_change(Some(&old), Some(&charge(at, 900)), now, tz, facts);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.0.contains("2026-11-01T00:00:00Z")),
            "{refused:?}"
        );
        assert!(check_change(Some(&old), Some(&charge(NOV.1 + 5, 800)), now, tz, facts).is_err());
        assert!(check_change(Some(&old), None, now, tz, facts).is_err());
        let mut again = charge(at, 800);
        if let ParsedTerm::Charge(c) = &mut again {
            c.index = 7;
        }
        assert!(check_change(Some(&old), Some(&again), now, tz, facts).is_ok());
        let open = Consumed {
            drawn: Decimal::ZERO,
            closed: &[oct],
            invoiced: false,
        };
        assert!(check_change(Some(&old), Some(&charge(at, 900)), now, tz, open).is_ok());
        assert!(check_change(Some(&old), None, now, tz, open).is_ok());
        // A new charge may be dated into a closed period: it reaches it as an adjustment.
        assert!(check_change(None, Some(&old), now, tz, facts).is_ok());
        let book = PriceBook::from_toml(BOOK).unwrap();
        let term = term(
            TermKind::Charges,
            "migration",
            serde_json::json!({"amount": "800.00", "at": "2026-11-20T00:00:00Z"}),
        );
        assert!(dated_into(&book, &term, NOV));
        assert!(!dated_into(&book, &term, oct));
    }

    /// Section 16's dates make a discount set by command dated like a credit: one from
    /// 2026-11-05 to 2026-12-01 reaches a closed November, not October or December; one with
    /// only `to`, or scoped to skus without dates, stands for no period.
    #[test]
    fn a_discount_with_from_is_dated_into_the_periods_it_overlaps() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let oct = (NOV.0 - 31 * 86_400, NOV.0);
        let dec = (NOV.1, NOV.1 + 31 * 86_400);
        let dated = term(
            TermKind::Discounts,
            "nov",
            serde_json::json!({"percent": "10", "from": "2026-11-05T00:00:00Z",
                "to": "2026-12-01T00:00:00Z"}),
        );
        assert!(dated_into(&book, &dated, NOV));
        assert!(!dated_into(&book, &dated, oct) && !dated_into(&book, &dated, dec));
        for body in [
            serde_json::json!({"percent": "10", "to": "2026-12-01T00:00:00Z"}),
            serde_json::json!({"percent": "10", "skus": ["gpu"]}),
        ] {
            assert!(!dated_into(
                &book,
                &term(TermKind::Discounts, "d", body),
                NOV
            ));
        }
    }

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
            auto_renew: false,
            end: None,
            refund: crate::pricing::pricebook::Refund::None,
            region: None,
        })
    }

    #[test]
    fn a_started_weekly_subscription_loses_only_cycles_not_started() {
        // Day 9 of the subscription: cycles 0 and 1 have started.
        let now = 1_000_000 + 9 * 86_400;
        let tz = Tz::UTC;
        let z = Consumed::default();
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

    /// Section 17 by command: a started subscription (day 9 of a weekly one here) keeps what
    /// it sold (sku, quantity, cycle, start, price, region), but may be ended early with its
    /// refund, its end moved or dropped, and its renewal turned on or off, until its end has
    /// passed; an `end` before now is refused (elapsed seconds stay billed).
    #[test]
    fn a_started_subscription_may_be_ended_early_with_a_refund() {
        let now = 1_000_000 + 9 * 86_400;
        let (tz, z) = (Tz::UTC, Consumed::default());
        let changed = |from: &ParsedTerm, f: &dyn Fn(&mut Subscription)| {
            let ParsedTerm::Subscription(mut s) = from.clone() else {
                unreachable!()
            };
            f(&mut s);
            ParsedTerm::Subscription(s)
        };
        let plan = weekly(4);
        let refused = |new: &ParsedTerm, old: &ParsedTerm| {
            check_change(Some(old), Some(new), now, tz, z).map_err(|e| e.0)
        };
        for sold in [
            changed(&plan, &|s| s.region = Some("us-east".into())),
            changed(&plan, &|s| s.price = Decimal::from(90)),
            changed(&plan, &|s| s.start += 1),
        ] {
            assert_eq!(
                refused(&sold, &plan),
                Err("the subscription has started: only `cycles`, `end`, `refund` and `auto_renew` may change".to_string())
            );
            assert!(check_change(Some(&plan), Some(&sold), 999_999, tz, z).is_ok());
        }
        let ended_now = changed(&plan, &|s| {
            s.end = Some(now);
            s.refund = crate::pricing::pricebook::Refund::Prorata;
        });
        assert_eq!(refused(&ended_now, &plan), Ok(()));
        assert_eq!(
            refused(&changed(&plan, &|s| s.auto_renew = true), &plan),
            Ok(())
        );
        let before_now = changed(&plan, &|s| s.end = Some(now - 1));
        assert_eq!(
            refused(&before_now, &plan),
            Err("`end` = 1970-01-21T13:46:39Z is before now (1970-01-21T13:46:40Z): a started subscription ends now or later (elapsed seconds stay billed)".to_string())
        );
        // Once its end has passed, the refund was given: only `cycles` may change.
        let ended = changed(&plan, &|s| s.end = Some(now - 86_400));
        let resumed = changed(&ended, &|s| s.end = None);
        assert_eq!(
            refused(&resumed, &ended),
            Err(
                "the subscription ended at 1970-01-20T13:46:40Z: only `cycles` may change"
                    .to_string()
            )
        );
        assert_eq!(refused(&changed(&ended, &|s| s.cycles = 3), &ended), Ok(()));
    }
}
