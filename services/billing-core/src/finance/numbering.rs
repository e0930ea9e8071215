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

/// The series of a tree's own documents in a sharded deployment (issue 29): `{prefix}-{root}`
/// (`INV-corp`), numbered `INV-corp-2026-000001`, so that the tree's numbers go wherever the
/// tree goes and are those it would have had on any shard.
pub fn tree_series(prefix: &str, root: &str) -> String {
    format!("{prefix}-{root}")
}

/// Whether `series` names a series: a prefix, or a prefix and a tree's root account
/// ([`tree_series`]).
pub fn is_series(series: &str) -> bool {
    is_prefix(series)
        || series.split_once('-').is_some_and(|(p, root)| {
            is_prefix(p) && crate::events::event_fields::is_account_id(root)
        })
}

/// A document number read back: `(series, year, seq)` of `{series}-{year}-{seq}` as
/// [`number`] writes it (seq at least six digits, from 1; the series a prefix or a tree's,
/// [`is_series`]); None for anything else.
pub fn parse(number: &str) -> Option<(&str, i32, i64)> {
    let mut parts = number.rsplitn(3, '-');
    let (seq, year, prefix) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !is_series(prefix) || year.len() != 4 || !digits(year) || seq.len() < 6 || !digits(seq) {
        return None;
    }
    let (year, seq): (i32, i64) = (year.parse().ok()?, seq.parse().ok()?);
    (seq > 0 && self::number(prefix, year, seq) == number).then_some((prefix, year, seq))
}

/// What is wrong with one series (issue 24.3, `gpubill verify`): the series says `last`
/// numbers were issued (None: no row), the documents carry `seqs`. Answers the numbers
/// missing from `1..=last` (a gap: an issued document is gone or was renumbered) and those
/// the series never issued (above `last`), each sorted.
pub fn series_gaps(last: Option<i64>, seqs: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let last = last.unwrap_or(0);
    let have: std::collections::BTreeSet<i64> = seqs.iter().copied().collect();
    let missing = (1..=last).filter(|n| !have.contains(n)).collect();
    let beyond = have.into_iter().filter(|n| *n > last || *n < 1).collect();
    (missing, beyond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_back_and_nothing_else_does() {
        assert_eq!(parse("INV-2026-000123"), Some(("INV", 2026, 123)));
        assert_eq!(parse("CN-2027-1234567"), Some(("CN", 2027, 1_234_567)));
        for bad in [
            "INV-2026-00012",
            "INV-2026-000000",
            "inv-2026-000001",
            "INV-26-000001",
            "INV2026000001",
            "INV-2026-0000001",
            "INV-2026-00001x",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_tree_s_own_series_holds_its_root() {
        let series = tree_series("INV", "corp-eu.1");
        assert_eq!(series, "INV-corp-eu.1");
        let n = number(&series, 2026, 12);
        assert_eq!(n, "INV-corp-eu.1-2026-000012");
        assert_eq!(parse(&n), Some(("INV-corp-eu.1", 2026, 12)));
        for bad in [
            "inv-corp-2026-000001",
            "INV-c/p-2026-000001",
            "INV--2026-000001",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_series_with_a_deleted_or_renumbered_document_has_a_gap() {
        assert_eq!(series_gaps(Some(3), &[1, 2, 3]), (vec![], vec![]));
        // INV-2026-000002 deleted.
        assert_eq!(series_gaps(Some(3), &[1, 3]), (vec![2], vec![]));
        // INV-2026-000001 renumbered INV-2026-000009.
        assert_eq!(series_gaps(Some(3), &[9, 2, 3]), (vec![1], vec![9]));
        // Documents of a series that has no row.
        assert_eq!(series_gaps(None, &[1]), (vec![], vec![1]));
    }

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
