//! Subscriptions (包周, 包月): billing-semantics.md section 13.
//!
//! Cycle `k` is `[start_k, start_(k+1))`; a week is 7 x 86,400 s; for a month, `start_k` is
//! `start` moved `k` months in the price book's timezone, on the same day of the month or the
//! month's last day when it has fewer days, at the same local time of day. At rule 4.2 a
//! subscription counts in `R(s)` like a reservation of `quantity` over its cycles; each cycle
//! whose start is in the period bills one `subscription` line up front: quantity
//! `quantity x` the cycle's seconds, amount `price`.
//!
//! Choice: when the local time of a month's `start_k` does not exist (a DST gap), the cycle
//! starts at the first local instant after the gap; when it exists twice, the earlier.

use crate::common::money::round_amount;
use crate::pricing::invoice::{Component, Line};
use crate::pricing::period::Period;
use crate::pricing::pricebook::{Cycle, Subscription};
use chrono::{Datelike, Duration, NaiveDate, TimeZone};
use chrono_tz::Tz;
use rust_decimal::Decimal;

const WEEK_SECONDS: i64 = 7 * 86_400;

/// `start_0 ..= start_cycles`: the bounds of every cycle.
pub fn cycle_bounds(sub: &Subscription, tz: Tz) -> Vec<i64> {
    (0..=i64::from(sub.cycles))
        .map(|k| match sub.cycle {
            Cycle::Week => sub.start + k * WEEK_SECONDS,
            Cycle::Month => add_months(sub.start, k, tz),
        })
        .collect()
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
    let mut naive = date.and_time(local.time());
    // A local time inside a DST gap: the first minute after it that exists.
    for _ in 0..(24 * 60) {
        if let Some(t) = tz.from_local_datetime(&naive).earliest() {
            return t.timestamp();
        }
        naive += Duration::minutes(1);
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

/// The `subscription` lines of the period: one per cycle starting in it.
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
        };
        assert_eq!(
            cycle_bounds(&sub, Tz::UTC),
            vec![1000, 1000 + WEEK_SECONDS, 1000 + 2 * WEEK_SECONDS]
        );
    }
}
