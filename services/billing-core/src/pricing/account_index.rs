//! One account's terms, read out of the price book: its reservations, packages,
//! subscriptions, charges, discounts and credits, each kind in price book order.
//!
//! Rating an account reads only its own terms. A context that rates many accounts (a month of
//! `gpubill rate`) indexes every account's terms once ([`TermsIndex`]); without an index an
//! account's terms are found by one pass over the book. Issue 26: scanning every account's
//! terms, several times for each account, made rating a month quadratic in the accounts
//! (with seven terms per account, 1.1 times the time of one reservation per account at 100
//! accounts, 1.6 to 1.9 times at 1,000 and 2,000).

use crate::pricing::pricebook::{
    Charge, Credit, Discount, Package, PriceBook, Reservation, Subscription,
};
use hashbrown::HashMap;
use rust_decimal::Decimal;

/// One account's terms, each kind in price book order.
#[derive(Debug, Clone, Default)]
pub struct TermsOfAccount<'a> {
    pub reservations: Vec<&'a Reservation>,
    pub packages: Vec<&'a Package>,
    pub subscriptions: Vec<&'a Subscription>,
    pub charges: Vec<&'a Charge>,
    /// Every discount, plain ones too (section 16).
    pub discounts: Vec<&'a Discount>,
    pub credits: Vec<&'a Credit>,
}

/// Every account's terms, by account.
pub type TermsIndex<'a> = HashMap<&'a str, TermsOfAccount<'a>>;

impl<'a> TermsOfAccount<'a> {
    /// The terms of `account` in `book`, by one pass over each kind: section 18, the terms
    /// of every account it pays for too (pooled; none for an account that does not pay for
    /// itself), each kind in price book order.
    pub fn of(book: &'a PriceBook, account: &str) -> Self {
        let mine = |a: &String| book.payer_of(a) == account;
        TermsOfAccount {
            reservations: book
                .reservations
                .iter()
                .filter(|x| mine(&x.account))
                .collect(),
            packages: book.packages.iter().filter(|x| mine(&x.account)).collect(),
            subscriptions: book
                .subscriptions
                .iter()
                .filter(|x| mine(&x.account))
                .collect(),
            charges: book.charges.iter().filter(|x| mine(&x.account)).collect(),
            discounts: book
                .discount_terms
                .iter()
                .filter(|x| mine(&x.account))
                .collect(),
            credits: book
                .credit_terms
                .iter()
                .filter(|x| mine(&x.account))
                .collect(),
        }
    }

    /// Every payer's terms in `book` (its members' pooled, section 18), by one pass over
    /// each kind.
    pub fn index(book: &'a PriceBook) -> TermsIndex<'a> {
        fn of<'i, 'a>(
            index: &'i mut TermsIndex<'a>,
            account: &'a str,
        ) -> &'i mut TermsOfAccount<'a> {
            index.entry(account).or_default()
        }
        let payer = |a: &'a String| book.payer_of(a);
        let mut index: TermsIndex<'a> = HashMap::new();
        for x in &book.reservations {
            of(&mut index, payer(&x.account)).reservations.push(x);
        }
        for x in &book.packages {
            of(&mut index, payer(&x.account)).packages.push(x);
        }
        for x in &book.subscriptions {
            of(&mut index, payer(&x.account)).subscriptions.push(x);
        }
        for x in &book.charges {
            of(&mut index, payer(&x.account)).charges.push(x);
        }
        for x in &book.discount_terms {
            of(&mut index, payer(&x.account)).discounts.push(x);
        }
        for x in &book.credit_terms {
            of(&mut index, payer(&x.account)).credits.push(x);
        }
        index
    }

    /// Section 16: the discounts other than plain ones that apply to the period `[start,
    /// end)`, in price book order (as [`PriceBook::scoped_discounts`]).
    pub fn scoped_discounts(&self, start: i64, end: i64) -> Vec<&'a Discount> {
        self.discounts
            .iter()
            .copied()
            .filter(|d| !d.is_plain() && d.applies_to(start, end))
            .collect()
    }

    /// Section 12: the sum of the credits that apply to the period `[start, end)`, at their
    /// full amounts (as [`PriceBook::credit_total_for`]).
    pub fn credit_total_for(&self, start: i64, end: i64) -> Decimal {
        self.credits
            .iter()
            .filter(|c| c.applies_to(start, end))
            .map(|c| c.amount)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK: &str = r#"
currency = "CNY"
[skus.g]
rate_per_hour = "10"
[[reservations]]
account = "b"
sku = "g"
quantity = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
rate_per_hour = "5"
[[discounts]]
account = "a"
percent = "5"
[[discounts]]
account = "b"
id = "d1"
skus = ["g"]
percent = "10"
to = "2026-11-10T00:00:00Z"
[[discounts]]
account = "b"
id = "d2"
percent = "20"
cap = "3"
[[credits]]
account = "b"
amount = "7"
[[credits]]
account = "b"
amount = "9"
from = "2026-12-01T00:00:00Z"
[[charges]]
account = "a"
id = "c"
amount = "1"
at = "2026-11-02T00:00:00Z"
"#;

    #[test]
    fn the_index_holds_what_a_pass_over_the_book_finds_in_book_order() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let index = TermsOfAccount::index(&book);
        for account in ["a", "b", "nobody"] {
            let one = TermsOfAccount::of(&book, account);
            let indexed = index.get(account).cloned().unwrap_or_default();
            assert_eq!(format!("{one:?}"), format!("{indexed:?}"), "{account}");
            // Each query agrees with the book's own.
            // November, November from the 11th (after `d1`), December (the second credit).
            let periods = [
                (1_793_491_200, 1_796_083_200),
                (1_794_355_200, 1_796_083_200),
                (1_796_083_200, 1_798_761_600),
            ];
            for (start, end) in periods {
                assert_eq!(
                    one.scoped_discounts(start, end),
                    book.scoped_discounts(account, start, end)
                );
                assert_eq!(
                    one.credit_total_for(start, end),
                    book.credit_total_for(account, start, end)
                );
            }
        }
        let b = &index["b"];
        let ids: Vec<_> = b.discounts.iter().map(|d| d.id.as_deref()).collect();
        assert_eq!(ids, vec![Some("d1"), Some("d2")]);
        assert_eq!(b.credits.len(), 2);
        assert_eq!(b.reservations.len(), 1);
        assert_eq!(index["a"].charges.len(), 1);
    }
}
