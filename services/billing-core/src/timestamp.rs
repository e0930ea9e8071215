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
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let dt = DateTime::parse_from_rfc3339(text).ok()?;
        Some(Timestamp {
            secs: dt.timestamp(),
            nanos: dt.timestamp_subsec_nanos(),
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
