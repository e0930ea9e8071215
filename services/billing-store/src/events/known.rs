//! [`Known`]: which stored events an as-known-at read counts.

/// Which events an as-known-at read counts: those ingested at or before a time (`ByTime`, ms:
/// the usage API's `as_known_at`), or those whose fold committed before the close that drew
/// stamp `BeforeStamp` (`verify`: exact, whatever the clocks of concurrent folds and closes
/// read; migration 0020). Rows stored before migrations 0018 and 0020 have no ingest time or
/// stamp and count as known from the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    ByTime(i64),
    BeforeStamp(i64),
}

impl Known {
    /// Everything stored.
    pub const ALL: Known = Known::ByTime(i64::MAX);

    /// (latest ingest time, first stamp not counted).
    pub(crate) fn bounds(self) -> (i64, i64) {
        match self {
            Known::ByTime(t) => (t, i64::MAX),
            Known::BeforeStamp(s) => (i64::MAX, s),
        }
    }

    /// The condition on a fact table's `ingested_ms` and `stamp`, to append to a `where`
    /// (integers the store computes itself, never input).
    pub(crate) fn condition(self) -> String {
        let (t, s) = self.bounds();
        format!(" and coalesce(ingested_ms, 0) <= {t} and coalesce(stamp, 0) < {s}")
    }
}
