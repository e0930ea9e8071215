//! Moves of accounts over time (issue 27): the organization that rates a period is the price
//! book's after the moves of accounts from its month or earlier
//! ([`billing_core::pricebook::PriceBook::at_period`]).

use billing_core::pricebook::PriceBook;
use std::sync::Arc;

/// `book` as it rates period `label`: its organization after the moves of accounts from
/// that month or earlier (issue 27, [`PriceBook::at_period`]); `book` itself without one.
pub(crate) fn in_period(book: Arc<PriceBook>, label: &str) -> Arc<PriceBook> {
    match book.at_period(label) {
        std::borrow::Cow::Borrowed(_) => book,
        std::borrow::Cow::Owned(b) => Arc::new(b),
    }
}

/// The month of the last move `book` has from `label` or earlier (None: before any): what
/// the organization of period `label` depends on besides the book.
pub(crate) fn moves_epoch<'b>(book: &'b PriceBook, label: &str) -> Option<&'b str> {
    book.org_moves
        .iter()
        .rev()
        .map(|(from, _)| from.as_str())
        .find(|from| *from <= label)
}
