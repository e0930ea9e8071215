//! Subscriptions (包周, 包月, 包年): billing-semantics.md sections 13 and 17.
//!
//! Cycle `k` is `[start_k, start_(k+1))`; a week is 7 x 86,400 s; for a month (a year),
//! `start_k` is `start` moved `k` months (years) in local time, on the same day of the month
//! or the month's last day when it has fewer days, at the same local time of day. Local time
//! is the timezone of the subscription's region (the price book's for home; an account's
//! timezone does not move cycles). At rule 4.2 a subscription counts in `R(s)` like a
//! reservation of `quantity` over its cycles (and only for `s < end`); each cycle whose start
//! is in the period (and before `end`) bills one `subscription` line up front: quantity
//! `quantity x` the cycle's seconds, amount `price`.
//!
//! Section 17: with `auto_renew` the cycles go on without a count; with `end` no cycle starts
//! at or after it; with `refund = "prorata"` an `end` strictly inside a started cycle refunds
//! `round(price x (start_(k+1) - end) / (start_(k+1) - start_k), 2)` onto the credit balance
//! in the period holding `end`, shown as a `subscription_refund` line.
//!
//! DST (section 17): a local time that does not exist is moved forward by the gap (02:30 in a
//! gap from 02:00 to 03:00 becomes 03:30); one that exists twice is the earlier instant.

use crate::common::money::round_amount;
use crate::pricing::invoice::{Component, Line};
use crate::pricing::period::Period;
pub use crate::pricing::pricebook::{AUTO_RENEW_HORIZON, auto_renew_cycles};
use crate::pricing::pricebook::{Cycle, Refund, Subscription};
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;
use rust_decimal::Decimal;

const WEEK_SECONDS: i64 = 7 * 86_400;

/// `start_k`: where cycle `k` starts (before any `end`).
fn cycle_start(sub: &Subscription, k: i64, tz: Tz) -> i64 {
    match sub.cycle {
        Cycle::Week => sub.start + k * WEEK_SECONDS,
        Cycle::Month => add_months(sub.start, k, tz),
        Cycle::Year => add_months(sub.start, 12 * k, tz),
    }
}

/// `start_0 ..= start_cycles`: the bounds of every cycle (before any `end`).
pub fn cycle_bounds(sub: &Subscription, tz: Tz) -> Vec<i64> {
    (0..=i64::from(sub.cycles))
        .map(|k| cycle_start(sub, k, tz))
        .collect()
}

/// The bounds of the cycles that start (section 17: none at or after `end`):
/// `start_0 ..= start_n`, `n` the number of them (just `[start_0]` when none does).
pub fn started_bounds(sub: &Subscription, tz: Tz) -> Vec<i64> {
    started_bounds_until(sub, tz, i64::MAX)
}

/// The bounds of [`started_bounds`] up to the first at or after `until`: all that rating a
/// period ending at `until` reads (the cycles starting before it with their ends, `R(s)` for
/// `s < until`, and the refund of an `end` before it). An auto-renewing subscription has
/// cycles up to [`AUTO_RENEW_HORIZON`]; a period needs only a few of them (issue 26: the 76
/// bounds of a yearly plan made a third of what part-3 terms added to rating a month).
pub fn started_bounds_until(sub: &Subscription, tz: Tz, until: i64) -> Vec<i64> {
    let stop = sub.end.map_or(until, |end| end.min(until));
    let mut bounds = Vec::new();
    for k in 0..=i64::from(sub.cycles) {
        let bound = cycle_start(sub, k, tz);
        bounds.push(bound);
        if bound >= stop {
            break;
        }
    }
    bounds
}

/// Where the subscription counts in `R(s)` (rule 4.2): `[start_0, start_n)` cut at `end`.
pub fn reserved_span(sub: &Subscription, started: &[i64]) -> (i64, i64) {
    let first = started.first().copied().unwrap_or(sub.start);
    let last = started.last().copied().unwrap_or(sub.start);
    (first, sub.end.map_or(last, |end| last.min(end)))
}

/// Section 17: the refund of a subscription ended strictly inside a started cycle with
/// `refund = "prorata"`: (`end`, unused unit-seconds, amount credited).
pub fn prorata_refund(sub: &Subscription, started: &[i64]) -> Option<(i64, Decimal, Decimal)> {
    let end = sub.end?;
    if sub.refund != Refund::Prorata || started.len() < 2 {
        return None;
    }
    let (from, to) = (started[started.len() - 2], started[started.len() - 1]);
    if !(from < end && end < to) {
        return None;
    }
    let unused = Decimal::from(to - end);
    let amount = round_amount(sub.price * unused / Decimal::from(to - from));
    Some((end, sub.quantity * unused, amount))
}

/// The `subscription_refund` line of the period holding `end`, and the amount it credits.
pub fn refund_line(sub: &Subscription, started: &[i64], period: &Period) -> Option<Line> {
    let (end, unused, amount) = prorata_refund(sub, started)?;
    if !period.contains(end) {
        return None;
    }
    let mut line = Line::usage(
        Component::SubscriptionRefund,
        &sub.sku,
        0,
        unused,
        Decimal::ZERO,
    );
    line.subscription = Some(sub.id.clone());
    line.refund = Some(amount);
    line.seq = sub.index;
    Some(line)
}

/// `start` moved `k` months in local time, clamped to the month's last day.
pub fn add_months(start: i64, k: i64, tz: Tz) -> i64 {
    let Some(utc) = chrono::DateTime::from_timestamp(start, 0) else {
        return start;
    };
    let local = utc.with_timezone(&tz).naive_local();
    let months = i64::from(local.year()) * 12 + i64::from(local.month0()) + k;
    let (year, month0) = (months.div_euclid(12) as i32, months.rem_euclid(12) as u32);
    let day = local.day().min(days_in_month(year, month0 + 1));
    let Some(date) = NaiveDate::from_ymd_opt(year, month0 + 1, day) else {
        return start;
    };
    local_instant(date.and_time(local.time()), tz)
}

/// The instant of local time `naive` in `tz` (section 17): the earlier one when it exists
/// twice; when it does not exist (a DST gap), moved forward by the gap, i.e. read with the
/// offset in force just before the gap (02:30 in a gap from 02:00 to 03:00 is 03:30).
pub fn local_instant(naive: NaiveDateTime, tz: Tz) -> i64 {
    if let Some(t) = tz.from_local_datetime(&naive).earliest() {
        return t.timestamp();
    }
    // The last local minute before the gap that exists gives the offset before it.
    let mut probe = naive;
    for _ in 0..(48 * 60) {
        probe -= Duration::minutes(1);
        if let Some(before) = tz.from_local_datetime(&probe).earliest() {
            let offset = before.offset().fix().local_minus_utc();
            return naive.and_utc().timestamp() - i64::from(offset);
        }
    }
    naive.and_utc().timestamp()
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    };
    next.and_then(|n| n.pred_opt()).map_or(28, |d| d.day())
}

/// The `subscription` lines of the period: one per cycle starting in it (`bounds` from
/// [`started_bounds`] leave out cycles at or after `end`).
pub fn cycle_lines(sub: &Subscription, bounds: &[i64], period: &Period) -> Vec<Line> {
    bounds
        .windows(2)
        .filter(|w| period.contains(w[0]))
        .map(|w| {
            let mut line = Line::usage(
                Component::Subscription,
                &sub.sku,
                0,
                sub.quantity * Decimal::from(w[1] - w[0]),
                round_amount(sub.price),
            );
            line.subscription = Some(sub.id.clone());
            line.seq = sub.index;
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::timestamp::Timestamp;

    fn at(s: &str) -> i64 {
        Timestamp::parse_rfc3339(s).unwrap().secs
    }

    #[test]
    fn a_month_cycle_starting_on_the_31st_moves_to_each_months_last_day() {
        let tz = chrono_tz::Asia::Shanghai;
        let start = at("2026-10-31T00:00:00+08:00");
        let got: Vec<i64> = (0..5).map(|k| add_months(start, k, tz)).collect();
        assert_eq!(
            got,
            vec![
                at("2026-10-31T00:00:00+08:00"),
                at("2026-11-30T00:00:00+08:00"),
                at("2026-12-31T00:00:00+08:00"),
                at("2027-01-31T00:00:00+08:00"),
                at("2027-02-28T00:00:00+08:00"),
            ]
        );
    }

    #[test]
    fn week_cycles_are_seven_days() {
        let sub = Subscription {
            index: 0,
            account: "a".into(),
            id: "w".into(),
            sku: "g".into(),
            quantity: Decimal::from(2),
            cycle: Cycle::Week,
            start: 1000,
            cycles: 2,
            price: Decimal::from(10),
            auto_renew: false,
            end: None,
            refund: Refund::None,
            region: None,
        };
        assert_eq!(
            cycle_bounds(&sub, Tz::UTC),
            vec![1000, 1000 + WEEK_SECONDS, 1000 + 2 * WEEK_SECONDS]
        );
    }

    #[test]
    fn a_local_time_in_a_dst_gap_moves_forward_by_the_gap_and_a_repeated_one_is_the_earlier() {
        // Europe/Berlin springs forward on 2026-03-29 from 02:00 to 03:00 CEST. A monthly
        // cycle started 2026-01-29 02:30 (+01:00) starts its third cycle at 02:30 on Mar 29,
        // which does not exist: moved forward by the gap, 03:30 CEST = 01:30Z.
        let tz = chrono_tz::Europe::Berlin;
        let start = at("2026-01-29T02:30:00+01:00");
        assert_eq!(add_months(start, 2, tz), at("2026-03-29T03:30:00+02:00"));
        // On 2026-10-25 02:30 happens twice (CEST, then CET): the earlier, 00:30Z.
        let autumn = at("2026-09-25T02:30:00+02:00");
        assert_eq!(add_months(autumn, 1, tz), at("2026-10-25T00:30:00Z"));
    }

    fn sub(cycle: Cycle, start: i64, cycles: u32) -> Subscription {
        Subscription {
            index: 0,
            account: "a".into(),
            id: "y".into(),
            sku: "g".into(),
            quantity: Decimal::ONE,
            cycle,
            start,
            cycles,
            price: "3650.00".parse().unwrap(),
            auto_renew: false,
            end: None,
            refund: Refund::None,
            region: None,
        }
    }

    #[test]
    fn a_yearly_cycle_from_the_29th_of_february_moves_to_the_28th() {
        let s = sub(Cycle::Year, at("2024-02-29T00:00:00Z"), 5);
        assert_eq!(
            cycle_bounds(&s, Tz::UTC),
            vec![
                at("2024-02-29T00:00:00Z"),
                at("2025-02-28T00:00:00Z"),
                at("2026-02-28T00:00:00Z"),
                at("2027-02-28T00:00:00Z"),
                at("2028-02-29T00:00:00Z"),
                at("2029-02-28T00:00:00Z"),
            ]
        );
    }

    #[test]
    fn ending_a_year_inside_its_second_cycle_refunds_the_unused_days() {
        // Cycles from 2026-01-01 (UTC), 3650.00 a year; ended 2026-11-11: 51 of 365 days
        // unused: 3650 x 51 / 365 = 510.00, 51 x 86,400 = 4,406,400 unused unit-seconds.
        // No cycle starts at or after the end: only the first of three.
        let mut s = sub(Cycle::Year, at("2026-01-01T00:00:00Z"), 3);
        s.end = Some(at("2026-11-11T00:00:00Z"));
        let started = started_bounds(&s, Tz::UTC);
        assert_eq!(
            started,
            vec![at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z")]
        );
        assert_eq!(prorata_refund(&s, &started), None, "refund = \"none\"");
        s.refund = Refund::Prorata;
        assert_eq!(
            prorata_refund(&s, &started),
            Some((
                at("2026-11-11T00:00:00Z"),
                Decimal::from(4_406_400),
                "510.00".parse().unwrap()
            ))
        );
        assert_eq!(
            reserved_span(&s, &started),
            (at("2026-01-01T00:00:00Z"), at("2026-11-11T00:00:00Z"))
        );
        // Ended exactly at a cycle's start: nothing unused, no refund; ended after the last
        // cycle: none either.
        s.end = Some(at("2027-01-01T00:00:00Z"));
        assert_eq!(prorata_refund(&s, &started_bounds(&s, Tz::UTC)), None);
        s.end = Some(at("2030-06-01T00:00:00Z"));
        assert_eq!(prorata_refund(&s, &started_bounds(&s, Tz::UTC)), None);
    }

    #[test]
    fn started_bounds_until_an_instant_are_those_up_to_the_first_at_or_after_it() {
        let tz = chrono_tz::Asia::Shanghai;
        let mut s = sub(Cycle::Month, at("2026-01-31T00:00:00+08:00"), 0);
        s.cycles = auto_renew_cycles(Cycle::Month, s.start);
        s.auto_renew = true;
        let until = at("2026-05-01T00:00:00+08:00");
        let all = started_bounds(&s, tz);
        let few = started_bounds_until(&s, tz, until);
        // Jan 31, Feb 28, Mar 31, Apr 30 start before May 1; May 31 is the first after.
        assert_eq!(few.len(), 5);
        assert_eq!(few[..], all[..5]);
        assert_eq!(few[4], at("2026-05-31T00:00:00+08:00"));
        // An instant on a bound stops there; an end before `until` stops at the end as
        // `started_bounds` does, and with a refund both give the same one.
        assert_eq!(started_bounds_until(&s, tz, few[2]), all[..3]);
        s.end = Some(at("2026-03-15T00:00:00+08:00"));
        s.refund = Refund::Prorata;
        let ended = started_bounds_until(&s, tz, until);
        assert_eq!(ended, started_bounds(&s, tz));
        assert_eq!(ended, all[..3]);
        assert_eq!(
            prorata_refund(&s, &ended),
            prorata_refund(&s, &started_bounds(&s, tz))
        );
        assert!(prorata_refund(&s, &ended).is_some());
    }

    #[test]
    fn auto_renewing_cycles_reach_past_every_instant_gpubill_reads() {
        for cycle in [Cycle::Week, Cycle::Month, Cycle::Year] {
            let mut s = sub(cycle, at("2026-12-15T00:00:00Z"), 0);
            s.cycles = auto_renew_cycles(cycle, s.start);
            s.auto_renew = true;
            let bounds = cycle_bounds(&s, chrono_tz::Asia::Shanghai);
            assert!(*bounds.last().unwrap() >= AUTO_RENEW_HORIZON, "{cycle:?}");
        }
    }
}
