//! Off-peak windows: billing-semantics.md section 4.3.
//!
//! `m(s)` is the smallest multiplier of the windows that apply to the sku and contain `s`:
//! the local time of day of `s` (in the price book's timezone, DST-correct) is in
//! `[from, to)`, wrapping past midnight when `to < from`, and the local weekday **of `s`
//! itself** is in `days` (choice: for a window wrapping midnight, the early-morning seconds
//! are checked against their own weekday, not the weekday the window opened on, as the
//! page's rule reads literally). `1` when no window applies.
//!
//! Rating works on segments, not seconds: [`Schedule`] cuts a period at every instant where
//! any window may open or close (local midnights, window edges, and UTC-offset changes), so
//! window membership is constant inside each segment.

use chrono::{DateTime, Offset, TimeZone};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde::Serialize;

pub const SECONDS_PER_DAY: i64 = 86_400;

/// Day-of-week bit, Monday = bit 0 .. Sunday = bit 6.
pub const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
pub const ALL_DAYS: u8 = 0b111_1111;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OffpeakWindow {
    /// Local time of day, seconds since midnight, inclusive.
    pub from_seconds: u32,
    /// Local time of day, exclusive; may be 86,400 ("24:00").
    pub to_seconds: u32,
    /// Bit set of weekdays (Monday = bit 0).
    pub days: u8,
    pub multiplier: Decimal,
    /// None: every sku.
    pub skus: Option<Vec<String>>,
}

impl OffpeakWindow {
    pub fn applies_to(&self, sku: &str) -> bool {
        self.skus
            .as_ref()
            .is_none_or(|s| s.iter().any(|x| x == sku))
    }

    /// Whether local time of day `tod` on local weekday `weekday` (Monday = 0) is inside.
    pub fn contains_local(&self, tod: u32, weekday: u32) -> bool {
        let in_time = if self.from_seconds < self.to_seconds {
            self.from_seconds <= tod && tod < self.to_seconds
        } else {
            tod >= self.from_seconds || tod < self.to_seconds
        };
        in_time && self.days & (1 << weekday) != 0
    }
}

/// UTC offset (seconds east) of `tz` at Unix second `s`.
pub fn utc_offset(tz: Tz, s: i64) -> i64 {
    match DateTime::from_timestamp(s, 0) {
        Some(dt) => tz
            .offset_from_utc_datetime(&dt.naive_utc())
            .fix()
            .local_minus_utc() as i64,
        None => 0,
    }
}

/// Local (time of day in seconds, weekday Monday = 0) of Unix second `s`.
pub fn local_time(tz: Tz, s: i64) -> (u32, u32) {
    let local = s + utc_offset(tz, s);
    let tod = local.rem_euclid(SECONDS_PER_DAY) as u32;
    // 1970-01-01 was a Thursday (3 with Monday = 0).
    let weekday = (local.div_euclid(SECONDS_PER_DAY) + 3).rem_euclid(7) as u32;
    (tod, weekday)
}

/// Spans `[a, b)` of constant UTC offset covering `[from, to)`. Offsets are sampled hourly
/// and each change is located to the second by bisection (no zone changes twice in an hour).
fn offset_spans(tz: Tz, from: i64, to: i64) -> Vec<(i64, i64, i64)> {
    const STEP: i64 = 3600;
    let mut spans = Vec::new();
    let (mut start, mut off, mut probe) = (from, utc_offset(tz, from), from);
    while probe < to - 1 {
        let next = (probe + STEP).min(to - 1);
        if utc_offset(tz, next) == off {
            probe = next;
            continue;
        }
        // Invariant: offset(lo) == off != offset(hi).
        let (mut lo, mut hi) = (probe, next);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if utc_offset(tz, mid) == off {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        spans.push((start, hi, off));
        (start, off, probe) = (hi, utc_offset(tz, hi), hi);
    }
    spans.push((start, to, off));
    spans
}

/// The windows active over each segment of a period: segment `i` is
/// `[starts[i], starts[i+1])` (the last ends at the period's end).
#[derive(Debug, Clone)]
pub struct Schedule {
    starts: Vec<i64>,
    end: i64,
    /// For each segment, the indexes of the windows containing it.
    active: Vec<Vec<u16>>,
}

impl Schedule {
    /// Cuts `[from, to)` at every instant where a window of `windows` may change.
    pub fn new(tz: Tz, windows: &[OffpeakWindow], from: i64, to: i64) -> Schedule {
        let mut cuts = vec![from];
        if !windows.is_empty() {
            let mut tods: Vec<i64> = vec![0];
            for w in windows {
                tods.push(w.from_seconds as i64);
                tods.push(w.to_seconds as i64);
            }
            tods.sort_unstable();
            tods.dedup();
            for (a, b, off) in offset_spans(tz, from, to) {
                cuts.push(a);
                let first_day = (a + off).div_euclid(SECONDS_PER_DAY);
                let last_day = (b - 1 + off).div_euclid(SECONDS_PER_DAY);
                for day in first_day..=last_day {
                    for tod in &tods {
                        let t = day * SECONDS_PER_DAY + tod - off;
                        if a < t && t < b {
                            cuts.push(t);
                        }
                    }
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let active = cuts
            .iter()
            .map(|&s| {
                let (tod, wd) = local_time(tz, s);
                (0..windows.len())
                    .filter(|&i| windows[i].contains_local(tod, wd))
                    .map(|i| i as u16)
                    .collect()
            })
            .collect();
        Schedule {
            starts: cuts,
            end: to,
            active,
        }
    }

    /// Segment boundaries where the multiplier may change (starts of segments).
    pub fn cuts(&self) -> &[i64] {
        &self.starts
    }

    pub fn end(&self) -> i64 {
        self.end
    }

    /// Index of the segment holding second `s` (which must be inside the period).
    pub fn segment_of(&self, s: i64) -> usize {
        self.starts.partition_point(|&x| x <= s).saturating_sub(1)
    }

    /// `m` for `sku` over segment `i`: the smallest applicable multiplier, or 1.
    pub fn multiplier(&self, windows: &[OffpeakWindow], sku: &str, segment: usize) -> Decimal {
        self.active[segment]
            .iter()
            .map(|&i| &windows[i as usize])
            .filter(|w| w.applies_to(sku))
            .map(|w| w.multiplier)
            .min()
            .unwrap_or(Decimal::ONE)
    }
}

/// `m(s)` computed directly for one second (the reference the schedule is tested against).
pub fn multiplier_at(tz: Tz, windows: &[OffpeakWindow], sku: &str, s: i64) -> Decimal {
    let (tod, wd) = local_time(tz, s);
    windows
        .iter()
        .filter(|w| w.applies_to(sku) && w.contains_local(tod, wd))
        .map(|w| w.multiplier)
        .min()
        .unwrap_or(Decimal::ONE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::timestamp::Timestamp;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn at(text: &str) -> i64 {
        Timestamp::parse_rfc3339(text).unwrap().secs
    }

    fn window(from: u32, to: u32, m: &str) -> OffpeakWindow {
        OffpeakWindow {
            from_seconds: from * 3600,
            to_seconds: to * 3600,
            days: ALL_DAYS,
            multiplier: d(m),
            skus: None,
        }
    }

    #[test]
    fn offpeak_window_22_to_06_shanghai_wraps_midnight() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let w = [window(22, 6, "0.70")];
        let m = |t: &str| multiplier_at(tz, &w, "gpu", at(t));
        assert_eq!(m("2026-11-02T21:59:59+08:00"), Decimal::ONE);
        assert_eq!(m("2026-11-02T22:00:00+08:00"), d("0.70"));
        assert_eq!(m("2026-11-03T00:30:00+08:00"), d("0.70"));
        assert_eq!(m("2026-11-03T05:59:59+08:00"), d("0.70"));
        assert_eq!(m("2026-11-03T06:00:00+08:00"), Decimal::ONE);
    }

    #[test]
    fn smallest_multiplier_wins_and_sku_filters_apply() {
        let tz: Tz = "UTC".parse().unwrap();
        let mut only_h100 = window(0, 12, "0.50");
        only_h100.skus = Some(vec!["gpu.h100".into()]);
        let w = [window(0, 8, "0.70"), only_h100];
        let s = at("2026-11-02T03:00:00Z");
        assert_eq!(multiplier_at(tz, &w, "gpu.h100", s), d("0.50"));
        assert_eq!(multiplier_at(tz, &w, "gpu.a100", s), d("0.70"));
        assert_eq!(
            multiplier_at(tz, &w, "gpu.a100", at("2026-11-02T09:00:00Z")),
            d("1")
        );
    }

    #[test]
    fn weekday_is_the_local_weekday_of_the_second() {
        // 2026-11-07 is a Saturday. Weekend-only window 22:00-06:00 in Shanghai.
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let mut w = window(22, 6, "0.60");
        w.days = (1 << 5) | (1 << 6);
        let w = [w];
        let m = |t: &str| multiplier_at(tz, &w, "x", at(t));
        assert_eq!(m("2026-11-06T23:00:00+08:00"), Decimal::ONE); // Friday night
        assert_eq!(m("2026-11-07T01:00:00+08:00"), d("0.60")); // Saturday early morning
        assert_eq!(m("2026-11-08T23:00:00+08:00"), d("0.60")); // Sunday night
        assert_eq!(m("2026-11-09T01:00:00+08:00"), Decimal::ONE); // Monday early morning
    }

    /// Seconds of `[from, to)` whose multiplier is `m`, by the schedule's segments.
    fn seconds_at(tz: Tz, w: &[OffpeakWindow], from: i64, to: i64, m: &str) -> i64 {
        let sched = Schedule::new(tz, w, from, to);
        let cuts = sched.cuts();
        (0..cuts.len())
            .filter(|&i| sched.multiplier(w, "x", i) == d(m))
            .map(|i| cuts.get(i + 1).copied().unwrap_or(to) - cuts[i])
            .sum()
    }

    #[test]
    fn dst_spring_forward_in_berlin_keeps_local_window_edges() {
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST. Window 01:00-04:00 local.
        // Local 01:00 CET = 00:00Z; local 04:00 CEST = 02:00Z. The window lasts 2 real hours.
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let w = [window(1, 4, "0.50")];
        let from = at("2026-03-28T23:00:00Z"); // local midnight
        let to = at("2026-03-29T22:00:00Z"); // next local midnight (CEST)
        let off_seconds = seconds_at(tz, &w, from, to, "0.50");
        assert_eq!(off_seconds, 2 * 3600);
        assert_eq!(
            multiplier_at(tz, &w, "x", at("2026-03-29T00:00:00Z")),
            d("0.50")
        );
        assert_eq!(
            multiplier_at(tz, &w, "x", at("2026-03-29T01:59:59Z")),
            d("0.50")
        );
        assert_eq!(
            multiplier_at(tz, &w, "x", at("2026-03-29T02:00:00Z")),
            Decimal::ONE
        );
    }

    #[test]
    fn dst_fall_back_in_berlin_window_lasts_an_hour_longer() {
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET. Window 01:00-04:00 local:
        // 01:00 CEST = 23:00Z (24th) to 04:00 CET = 03:00Z: 4 real hours.
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let w = [window(1, 4, "0.50")];
        let from = at("2026-10-24T22:00:00Z");
        let to = at("2026-10-25T23:00:00Z");
        let off_seconds = seconds_at(tz, &w, from, to, "0.50");
        assert_eq!(off_seconds, 4 * 3600);
    }

    #[test]
    fn schedule_agrees_with_the_per_second_definition() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let mut weekend = window(20, 2, "0.6");
        weekend.days = 0b110_0000;
        let w = [window(1, 4, "0.5"), window(23, 7, "0.8"), weekend];
        let from = at("2026-10-23T22:00:00Z");
        let to = at("2026-10-27T23:00:00Z");
        let sched = Schedule::new(tz, &w, from, to);
        let mut s = from;
        while s < to {
            let seg = sched.segment_of(s);
            assert_eq!(
                sched.multiplier(&w, "x", seg),
                multiplier_at(tz, &w, "x", s),
                "{s}"
            );
            s += 61;
        }
    }
}
