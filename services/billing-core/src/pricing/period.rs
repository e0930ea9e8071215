//! Billing periods: the calendar month in the price book's timezone (section 4).
//!
//! Choice where the page is silent: when local midnight does not exist (a DST jump at
//! midnight, as in some American zones), the period starts at the first local instant of the
//! day, i.e. the moment of the jump; when it exists twice, the earlier one.

use crate::common::limits::{MAX_YEAR, MIN_YEAR};
use crate::common::timestamp::format_secs;
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error(
        "period {0:?} is not a month of the form YYYY-MM between {MIN_YEAR}-01 and {MAX_YEAR}-12"
    )]
    BadMonth(String),
}

/// `[start, end)` in UTC Unix seconds, with its label (`2026-11`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub label: String,
    pub start: i64,
    pub end: i64,
}

/// The period as an invoice shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodJson {
    pub start: String,
    pub end: String,
}

impl Period {
    /// The calendar month `YYYY-MM` in `tz`.
    pub fn month(label: &str, tz: Tz) -> Result<Period, PeriodError> {
        let bad = || PeriodError::BadMonth(label.chars().take(40).collect());
        let (y, m) = label.split_once('-').ok_or_else(bad)?;
        if y.len() != 4 || m.len() != 2 || !(y.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let year: i32 = y.parse().map_err(|_| bad())?;
        let month: u32 = m.parse().map_err(|_| bad())?;
        if !(MIN_YEAR..=MAX_YEAR).contains(&year) {
            return Err(bad());
        }
        let first = NaiveDate::from_ymd_opt(year, month, 1).ok_or_else(bad)?;
        let next = if month == 12 {
            NaiveDate::from_ymd_opt(year + 1, 1, 1)
        } else {
            NaiveDate::from_ymd_opt(year, month + 1, 1)
        }
        .ok_or_else(bad)?;
        Ok(Period {
            label: format!("{:04}-{:02}", first.year(), first.month()),
            start: local_day_start(tz, first),
            end: local_day_start(tz, next),
        })
    }

    /// The month (label) holding Unix second `s` in `tz`.
    pub fn containing(s: i64, tz: Tz) -> Option<Period> {
        let dt = chrono::DateTime::from_timestamp(s, 0)?.with_timezone(&tz);
        Period::month(&format!("{:04}-{:02}", dt.year(), dt.month()), tz).ok()
    }

    pub fn contains(&self, s: i64) -> bool {
        self.start <= s && s < self.end
    }

    pub fn seconds(&self) -> i64 {
        self.end - self.start
    }

    pub fn to_json(&self) -> PeriodJson {
        PeriodJson {
            start: format_secs(self.start),
            end: format_secs(self.end),
        }
    }
}

/// The first instant of local date `d` in `tz`, as Unix seconds.
fn local_day_start(tz: Tz, d: NaiveDate) -> i64 {
    let midnight: NaiveDateTime = d.and_hms_opt(0, 0, 0).unwrap_or_default();
    if let Some(t) = tz.from_local_datetime(&midnight).earliest() {
        return t.timestamp();
    }
    // Midnight falls in a gap: the day starts when the clock jumps. Find the first minute of
    // the day that exists, then walk back to the jump to the second.
    let mut probe = midnight;
    for _ in 0..(24 * 60) {
        probe += Duration::minutes(1);
        if let Some(t) = tz.from_local_datetime(&probe).earliest() {
            let mut s = t.timestamp();
            while tz
                .timestamp_opt(s - 1, 0)
                .single()
                .is_some_and(|x| x.date_naive() == d)
            {
                s -= 1;
            }
            return s;
        }
    }
    midnight.and_utc().timestamp()
}

/// Most periods one automatic close looks at (a century of months: the supported range).
pub const MAX_DUE_PERIODS: usize = 1_200;

/// Issue 12, automatic closing: the periods due for closing at `now_s` with a grace of
/// `grace_s` seconds, in order: from the period containing `from_s` on, every one whose end
/// plus the grace is at or before `now_s` (at most [`MAX_DUE_PERIODS`]). Pure: the caller
/// reads the clock and says which of them are closed already.
pub fn due_for_close(from_s: i64, now_s: i64, grace_s: i64, tz: Tz) -> Vec<Period> {
    let mut due = Vec::new();
    let mut at = from_s;
    while due.len() < MAX_DUE_PERIODS {
        let Some(p) = Period::containing(at, tz) else {
            break;
        };
        if p.end.saturating_add(grace_s) > now_s {
            break;
        }
        at = p.end;
        due.push(p);
    }
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn november_in_shanghai_starts_at_16z() {
        let p = Period::month("2026-11", chrono_tz::Asia::Shanghai).unwrap();
        assert_eq!(p.to_json().start, "2026-10-31T16:00:00Z");
        assert_eq!(p.to_json().end, "2026-11-30T16:00:00Z");
        assert_eq!(p.seconds(), 30 * 86_400);
    }

    #[test]
    fn months_across_dst_in_berlin_have_an_hour_more_or_less() {
        let tz = chrono_tz::Europe::Berlin;
        let march = Period::month("2026-03", tz).unwrap();
        assert_eq!(march.seconds(), 31 * 86_400 - 3600);
        let october = Period::month("2026-10", tz).unwrap();
        assert_eq!(october.seconds(), 31 * 86_400 + 3600);
        assert_eq!(october.to_json().start, "2026-09-30T22:00:00Z");
        let dec = Period::month("2026-12", tz).unwrap();
        assert_eq!(dec.to_json().end, "2026-12-31T23:00:00Z");
    }

    #[test]
    fn midnight_in_a_dst_gap_starts_the_day_at_the_jump() {
        // America/Santiago springs forward at 24:00 on 2026-09-05 -> 2026-09-06 01:00.
        let tz = chrono_tz::America::Santiago;
        let start = local_day_start(tz, NaiveDate::from_ymd_opt(2026, 9, 6).unwrap());
        let local = chrono::DateTime::from_timestamp(start, 0)
            .unwrap()
            .with_timezone(&tz);
        assert_eq!(
            local.date_naive(),
            NaiveDate::from_ymd_opt(2026, 9, 6).unwrap()
        );
        let before = chrono::DateTime::from_timestamp(start - 1, 0)
            .unwrap()
            .with_timezone(&tz);
        assert_eq!(
            before.date_naive(),
            NaiveDate::from_ymd_opt(2026, 9, 5).unwrap()
        );
    }

    #[test]
    fn bad_months_are_errors() {
        for bad in [
            "2026-13", "2026-1", "26-11", "2026/11", "", "2026-00", "10000-01",
        ] {
            assert!(Period::month(bad, Tz::UTC).is_err(), "{bad}");
        }
        assert_eq!(
            Period::containing(1_793_462_400, chrono_tz::Asia::Shanghai)
                .unwrap()
                .label,
            "2026-11"
        );
    }

    #[test]
    fn periods_are_due_for_closing_once_their_end_plus_the_grace_has_passed() {
        use crate::common::timestamp::Timestamp;
        let at = |t: &str| Timestamp::parse_rfc3339(t).unwrap().secs;
        let labels = |v: Vec<Period>| v.into_iter().map(|p| p.label).collect::<Vec<_>>();
        let grace = 72 * 3600;
        let from = at("2026-10-15T12:00:00Z");
        // UTC: November ends 2026-12-01T00:00Z, so with 72 h it is due at 2026-12-04T00:00Z.
        assert_eq!(
            labels(due_for_close(
                from,
                at("2026-12-03T23:59:59Z"),
                grace,
                Tz::UTC
            )),
            ["2026-10"]
        );
        assert_eq!(
            labels(due_for_close(
                from,
                at("2026-12-04T00:00:00Z"),
                grace,
                Tz::UTC
            )),
            ["2026-10", "2026-11"]
        );
        // Asia/Shanghai: November ends 2026-11-30T16:00Z, due 2026-12-03T16:00Z.
        let sh = chrono_tz::Asia::Shanghai;
        assert_eq!(
            labels(due_for_close(from, at("2026-12-03T15:59:59Z"), grace, sh)),
            ["2026-10"]
        );
        assert_eq!(
            labels(due_for_close(from, at("2026-12-03T16:00:00Z"), grace, sh)),
            ["2026-10", "2026-11"]
        );
        // No grace: due the second the period ends; nothing before the first period ends.
        assert_eq!(
            labels(due_for_close(from, at("2026-11-01T00:00:00Z"), 0, Tz::UTC)),
            ["2026-10"]
        );
        assert!(due_for_close(from, at("2026-10-31T23:59:59Z"), 0, Tz::UTC).is_empty());
        // Bounded: from 2000 to 2100 is at most a century of months.
        let all = due_for_close(at("2000-01-01T00:00:00Z"), i64::MAX, 0, Tz::UTC);
        assert_eq!(all.len(), MAX_DUE_PERIODS);
    }
}
