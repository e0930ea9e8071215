//! Issue 12, document numbers: gapless per series and year (`INV-2026-000123`). Pure: the
//! store keeps each series' last number and takes blocks of it in the issuing transaction.

use chrono::Datelike;
use chrono_tz::Tz;

/// The default prefix of invoice numbers.
pub const INVOICE_PREFIX: &str = "INV";

/// The default prefix of credit note numbers.
pub const CREDIT_NOTE_PREFIX: &str = "CN";

/// A series prefix: 1 to 16 of `A-Z 0-9`.
pub fn is_prefix(p: &str) -> bool {
    (1..=16).contains(&p.len())
        && p.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// The year a document issued at `issued_s` is numbered in: the calendar year of its issue
/// date in the price book's timezone (see `choices.rs`). None out of chrono's range.
pub fn year_of(issued_s: i64, tz: Tz) -> Option<i32> {
    Some(
        chrono::DateTime::from_timestamp(issued_s, 0)?
            .with_timezone(&tz)
            .year(),
    )
}

/// The document number `seq` (from 1) of `prefix`'s series in `year`: at least six digits.
pub fn number(prefix: &str, year: i32, seq: i64) -> String {
    format!("{prefix}-{year}-{seq:06}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_prefix_year_and_six_digits() {
        assert_eq!(number("INV", 2026, 123), "INV-2026-000123");
        assert_eq!(number("CN", 2027, 7), "CN-2027-000007");
        assert_eq!(number("INV", 2026, 1_234_567), "INV-2026-1234567");
        assert!(is_prefix("INV") && is_prefix("GPU2026"));
        for bad in ["", "inv", "IN-V", "ABCDEFGHIJKLMNOPQ", "INV "] {
            assert!(!is_prefix(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_year_is_the_issue_date_s_in_the_price_book_timezone() {
        // 2026-12-31T16:30:00Z is 2027-01-01 00:30 in Shanghai, still 2026 in UTC.
        let s = 1_798_734_600;
        assert_eq!(year_of(s, Tz::UTC), Some(2026));
        assert_eq!(year_of(s, chrono_tz::Asia::Shanghai), Some(2027));
    }
}
