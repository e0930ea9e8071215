//! Re-rating a closed period (issue 24.1): which account terms rate it again
//! ([`terms_for_closed_period`]), a later change reaching it only when the term is dated into
//! it ([`dated_into`]).

use crate::pricing::pricebook::{AccountTerm, ParsedTerm, PriceBook, TermKind};
use crate::pricing::subscriptions::cycle_bounds;
use std::collections::BTreeMap;

/// Whether `term` is dated into the period `[start, end)` (issue 24.1): it names the instant
/// it starts at, before `end`, and it lasts past `start`. A reservation, a package and a
/// subscription always name their start (a subscription lasts to the end of its last cycle);
/// a credit only with `from` (a credit with only `to`, or none, stands for "from whenever",
/// not for a period); a charge when its `at` is in the period; a discount, like a credit,
/// only with `from` (section 16's dates). A term the period's price book
/// version does not accept (an sku it lacks) is dated into nothing: it stays out of it anyway.
pub fn dated_into(book: &PriceBook, term: &AccountTerm, (start, end): (i64, i64)) -> bool {
    match book.parse_account_term(term) {
        Ok(ParsedTerm::Reservation(r)) => r.from < end && r.to > start,
        Ok(ParsedTerm::Package(p)) => p.from < end && p.to > start,
        Ok(ParsedTerm::Credit(c)) => {
            c.from.is_some_and(|f| f < end) && c.to.is_none_or(|t| t > start)
        }
        Ok(ParsedTerm::Subscription(s)) => {
            let last = cycle_bounds(&s, book.timezone)
                .last()
                .copied()
                .unwrap_or(s.start);
            s.start < end && last > start
        }
        Ok(ParsedTerm::Charge(c)) => start <= c.at && c.at < end,
        // Undated: a closed period keeps the timezone it was closed with.
        Ok(ParsedTerm::Account(_)) => false,
        Ok(ParsedTerm::Discount(d)) => {
            d.from.is_some_and(|f| f < end) && d.to.is_none_or(|t| t > start)
        }
        Err(_) => false,
    }
}

/// The account terms that rate a closed period `[start, end)` again (issue 24.1), from the
/// terms as they stood when it closed (`at_close`) and as they are now (`current`), both
/// sorted by (account, kind, term id) and each term once. A closed period keeps the terms it
/// was closed with; a term that changed since (set, changed or ended) takes its current
/// version (or goes) only when its version at the close or its current one is dated into the
/// period ([`dated_into`]): then the difference is an adjustment at the next close, like late
/// usage. An undated term set or changed after the close never reaches the period. With no
/// change since the close this is `at_close`. Sorted like the inputs.
pub fn terms_for_closed_period(
    book: &PriceBook,
    period: (i64, i64),
    at_close: &[AccountTerm],
    current: &[AccountTerm],
) -> Vec<AccountTerm> {
    type Key<'a> = (&'a str, TermKind, &'a str);
    let then: BTreeMap<Key, &AccountTerm> = at_close
        .iter()
        .map(|t| ((t.account.as_str(), t.kind, t.term_id.as_str()), t))
        .collect();
    let now: BTreeMap<Key, &AccountTerm> = current
        .iter()
        .map(|t| ((t.account.as_str(), t.kind, t.term_id.as_str()), t))
        .collect();
    let mut keys: Vec<Key> = then.keys().chain(now.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<AccountTerm> = Vec::with_capacity(keys.len());
    for k in keys {
        let (old, new) = (then.get(&k).copied(), now.get(&k).copied());
        let kept = if old == new {
            old
        } else {
            let reaches = old.is_some_and(|t| dated_into(book, t, period))
                || new.is_some_and(|t| dated_into(book, t, period));
            if reaches { new } else { old }
        };
        out.extend(kept.cloned());
    }
    out
}
