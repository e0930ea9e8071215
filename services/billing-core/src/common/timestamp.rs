//! RFC 3339 instants as exact (seconds, nanoseconds) pairs in UTC.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// An instant in UTC, exact to the nanosecond. Ordered and hashable; no floating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp {
    /// Whole seconds since the Unix epoch (floor).
    pub secs: i64,
    /// Nanoseconds past `secs`, in `0..1_000_000_000`.
    pub nanos: u32,
}

impl Timestamp {
    pub const fn from_secs(secs: i64) -> Self {
        Timestamp { secs, nanos: 0 }
    }

    /// Parses RFC 3339 (`2026-11-03T10:00:30Z`, `2026-11-05T12:00:19.5+08:00`).
    ///
    /// The common shape is parsed by hand (it is on the ingest hot path, three times per
    /// event); anything else, including leap seconds, goes to chrono. A property test checks
    /// that both agree on every input the fast path accepts.
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        if let Some(t) = parse_fast(text.as_bytes()) {
            return Some(t);
        }
        Self::parse_rfc3339_chrono(text)
    }

    /// RFC 3339 through chrono only (the reference for the fast path).
    ///
    /// A leap second (`23:59:60Z`, which chrono represents as `23:59:59` with a billion
    /// nanoseconds or more) is normalised to the instant it names on a clock without leap
    /// seconds, the first second of the next minute: `2016-12-31T23:59:60.5Z` is
    /// `2017-01-01T00:00:00.5Z`, so both spellings bill the same second and fingerprint alike.
    pub fn parse_rfc3339_chrono(text: &str) -> Option<Timestamp> {
        let dt = DateTime::parse_from_rfc3339(text).ok()?;
        let nanos = dt.timestamp_subsec_nanos();
        Some(Timestamp {
            secs: dt
                .timestamp()
                .checked_add(i64::from(nanos / 1_000_000_000))?,
            nanos: nanos % 1_000_000_000,
        })
    }

    /// `floor(self)`: the first second a usage interval starting here touches.
    pub const fn floor_secs(self) -> i64 {
        self.secs
    }

    /// `ceil(self)`: partial seconds bill as whole seconds.
    pub const fn ceil_secs(self) -> i64 {
        if self.nanos > 0 {
            self.secs + 1
        } else {
            self.secs
        }
    }

    /// `self - earlier` in nanoseconds (exact; both within chrono's range so no overflow).
    pub fn nanos_since(self, earlier: Timestamp) -> i128 {
        (self.secs as i128 - earlier.secs as i128) * 1_000_000_000 + self.nanos as i128
            - earlier.nanos as i128
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match DateTime::<Utc>::from_timestamp(self.secs, self.nanos) {
            Some(dt) => f.write_str(&dt.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
            None => write!(f, "{}s", self.secs),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|+HH:MM|-HH:MM)` with plain ASCII digits; None for any
/// other shape (which chrono then decides).
fn parse_fast(b: &[u8]) -> Option<Timestamp> {
    fn digits(b: &[u8]) -> Option<u32> {
        let mut v = 0u32;
        for &c in b {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (c - b'0') as u32;
        }
        Some(v)
    }
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let year = digits(&b[0..4])? as i64;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])? as i64;
    let minute = digits(&b[14..16])? as i64;
    let second = digits(&b[17..19])? as i64;
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b[i] == b'.' {
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        let n = end - start;
        if n == 0 || n > 9 {
            return None;
        }
        nanos = digits(&b[start..end])? * 10u32.pow(9 - n as u32);
        i = end;
    }
    let offset = match &b[i..] {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = digits(&[*h1, *h2])? as i64;
            let m = digits(&[*m1, *m2])? as i64;
            if h > 23 || m > 59 {
                return None;
            }
            let o = h * 3600 + m * 60;
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(Timestamp {
        secs: days * 86_400 + hour * 3600 + minute * 60 + second - offset,
        nanos,
    })
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats whole Unix seconds as `2026-10-31T16:00:00Z`.
pub fn format_secs(secs: i64) -> String {
    Timestamp::from_secs(secs).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_seconds_floor_and_ceil() {
        let t = Timestamp::parse_rfc3339("2026-11-05T12:00:19.5+08:00").unwrap();
        assert_eq!(t.floor_secs(), 1_793_851_219);
        assert_eq!(t.ceil_secs(), 1_793_851_220);
        let whole = Timestamp::parse_rfc3339("2026-11-05T04:00:19Z").unwrap();
        assert_eq!(whole.ceil_secs(), whole.floor_secs());
        assert_eq!(format_secs(1_793_462_400), "2026-10-31T16:00:00Z");
    }

    #[test]
    fn the_fast_path_agrees_with_chrono() {
        for text in [
            "2026-11-03T10:00:30Z",
            "2026-11-05T12:00:19.5+08:00",
            "2024-02-29T23:59:59.123456789-05:30",
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999999999Z",
            "0001-01-01T00:00:00+23:59",
            "9999-12-31T23:59:59-23:59",
            "2100-03-01T00:00:00Z",
            "2000-02-29T00:00:00Z",
        ] {
            assert!(parse_fast(text.as_bytes()).is_some(), "{text}");
            assert_eq!(
                Timestamp::parse_rfc3339(text),
                Timestamp::parse_rfc3339_chrono(text),
                "{text}"
            );
        }
        for other in [
            "2026-11-03t10:00:30z",
            "2026-11-03 10:00:30Z",
            "2026-06-30T23:59:60Z",
            "2023-02-29T00:00:00Z",
        ] {
            assert!(parse_fast(other.as_bytes()).is_none(), "{other}");
        }
    }

    #[test]
    fn a_leap_second_is_the_next_minute_s_first_second() {
        let leap = Timestamp::parse_rfc3339("2016-12-31T23:59:60Z").unwrap();
        let next = Timestamp::parse_rfc3339("2017-01-01T00:00:00Z").unwrap();
        assert_eq!(leap, next);
        let leap = Timestamp::parse_rfc3339("2016-12-31T23:59:60.25Z").unwrap();
        assert_eq!(leap.nanos, 250_000_000);
        assert_eq!(leap.secs, next.secs);
    }

    #[test]
    fn unparsable_times_are_none() {
        for bad in [
            "",
            "2026-11-05",
            "2026-13-01T00:00:00Z",
            "yesterday",
            "2026-11-05T12:00:00",
        ] {
            assert!(Timestamp::parse_rfc3339(bad).is_none(), "{bad}");
        }
    }
}
