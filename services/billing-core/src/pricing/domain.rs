//! Section 19 for an engine that rates one billing domain at a time: an account at home or in
//! one region, each a billing domain of its own (currency, tiers, tax, credit balance).
//!
//! [`crate::rating::rate_month`] rates a whole month at once; an engine rates a domain when its
//! ledger moves or its period closes. Both choose the book, the platform and the period the
//! same way: the region's book ([`PriceBook::for_region`]), the region's spot curves, and the
//! month in the account's timezone, else the region's ([`domain_period`]).

use crate::ledger::AccountLedger;
use crate::pricing::account_index::{TermsIndex, TermsOfAccount};
use crate::pricing::period::{Period, PeriodError};
use crate::pricing::pricebook::PriceBook;
use crate::pricing::rating::{Rated, rate_payer};
use crate::pricing::rating_context::{RateMonthError, RatingContext, RatingError, Unpriced};
use crate::rental::platform::Platform;
use rust_decimal::Decimal;
use std::borrow::Cow;
use std::collections::HashMap;

/// What separates an account from its region in a domain's id: account ids never hold it.
pub const SEPARATOR: char = '@';

/// A billing domain: `account` at home (`region` `None`) or in `region`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Domain<'a> {
    pub account: &'a str,
    pub region: Option<&'a str>,
}

impl<'a> Domain<'a> {
    /// The domain an id names: `account` is home, `account@region` a region.
    pub fn parse(id: &'a str) -> Domain<'a> {
        match id.split_once(SEPARATOR) {
            Some((account, region)) => Domain {
                account,
                region: Some(region),
            },
            None => Domain {
                account: id,
                region: None,
            },
        }
    }

    /// The domain's id: the account for home, `account@region` for a region.
    pub fn id(&self) -> Cow<'a, str> {
        match self.region {
            None => Cow::Borrowed(self.account),
            Some(r) => Cow::Owned(format!("{}{SEPARATOR}{r}", self.account)),
        }
    }
}

/// Section 19: the period `label` of `account`'s invoices rated with `region_book` (a book of
/// [`PriceBook::for_region`]): the month in the account's timezone (`[[accounts]]` of `book`),
/// else the region's.
pub fn domain_period(
    book: &PriceBook,
    region_book: &PriceBook,
    account: &str,
    label: &str,
) -> Result<Period, PeriodError> {
    let tz = book
        .account_timezone(account)
        .unwrap_or(region_book.timezone);
    Period::month(label, tz)
}

/// Section 19: the domains the price book's account terms give an invoice: home for the
/// accounts with a home term (plain discounts and `[[accounts]]` count there), and each
/// region for the accounts with a term there; sorted by account, then region (home first).
pub fn term_domains(book: &PriceBook) -> std::collections::BTreeSet<Domain<'_>> {
    let mut out: std::collections::BTreeSet<Domain<'_>> = book
        .accounts_in(None)
        .into_iter()
        .map(|account| Domain {
            account,
            region: None,
        })
        .collect();
    for region in book.regions.keys() {
        out.extend(
            book.accounts_in(Some(region))
                .into_iter()
                .map(|account| Domain {
                    account,
                    region: Some(region.as_str()),
                }),
        );
    }
    out
}

/// A domain rated, or the usage of a region the book does not name (unpriced: no currency).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainRated {
    Rated(Box<Rated>),
    UnknownRegion(Vec<Unpriced>),
}

/// The books and platforms of one price book's regions, made once and shared by the domains
/// rated with it.
pub struct Domains<'b> {
    book: &'b PriceBook,
    platform: &'b Platform,
    regions: HashMap<Option<String>, Option<RegionView<'b>>>,
    /// Every account's home terms, indexed once a second home domain is rated (a close, a
    /// batch): each then finds its terms without a pass over the whole book. Only for a book
    /// without regional terms, whose home book is the book itself.
    index: Option<TermsIndex<'b>>,
    /// Home domains rated so far.
    home_rated: usize,
}

/// A region's book and platform (`None` in [`Domains`]: a region the book does not name).
type RegionView<'b> = (Cow<'b, PriceBook>, Cow<'b, Platform>);

impl<'b> Domains<'b> {
    pub fn new(book: &'b PriceBook, platform: &'b Platform) -> Domains<'b> {
        Domains {
            book,
            platform,
            regions: HashMap::new(),
            index: None,
            home_rated: 0,
        }
    }

    /// The book, platform and period that rate `domain` in the month `label`; `None` for a
    /// region the price book does not name.
    pub fn view(
        &mut self,
        domain: Domain<'_>,
        label: &str,
    ) -> Result<Option<(&PriceBook, &Platform, Period)>, PeriodError> {
        view_in(&mut self.regions, (self.book, self.platform), domain, label)
    }

    /// Rates `domain` for the month `label` with `credit` (what the caller's credit pool,
    /// given the domain's book and period, has available): the invoice in the region's
    /// currency naming its region when the book uses part 3, as [`crate::rating::rate_month`].
    /// The account is rated on `ledger` alone; [`Domains::rate_members`] rates a payer with
    /// its members (section 18).
    pub fn rate(
        &mut self,
        domain: Domain<'_>,
        label: &str,
        ledger: Option<&AccountLedger>,
        credit: impl FnOnce(&PriceBook, &Period) -> Decimal,
    ) -> Result<DomainRated, RateMonthError> {
        self.rate_members(domain, label, &[(domain.account, ledger)], credit)
    }

    /// Section 18: rates the payer of `domain` for the month `label` with its `members` (each
    /// with its ledger in the domain's region, the payer among them), as
    /// [`crate::rating::rate_month`] rates it: the payer's timezone sets the period, the
    /// members' keys stay distinct and their terms pool, and with an `allocation_tag` the
    /// invoice carries its allocation. A domain whose account is not a payer is
    /// `RatingError::NotAPayer`.
    pub fn rate_members(
        &mut self,
        domain: Domain<'_>,
        label: &str,
        members: &[(&str, Option<&AccountLedger>)],
        credit: impl FnOnce(&PriceBook, &Period) -> Decimal,
    ) -> Result<DomainRated, RateMonthError> {
        if !self.book.is_payer(domain.account) {
            return Err(RateMonthError::Rating(RatingError::NotAPayer {
                account: domain.account.to_string(),
                payer: self.book.payer_of(domain.account).to_string(),
            }));
        }
        let show_region = self.book.uses_part3();
        if domain.region.is_none() {
            self.home_rated += 1;
            if self.home_rated == 2 && !self.book.has_regional_terms() {
                self.index = Some(TermsOfAccount::index(self.book));
            }
        }
        let view = view_in(&mut self.regions, (self.book, self.platform), domain, label)?;
        let Some((rbook, platform, period)) = view else {
            let region = domain.region.unwrap_or_default();
            let tz = self
                .book
                .account_timezone(domain.account)
                .unwrap_or(self.book.timezone);
            let period = Period::month(label, tz)?;
            let mut unpriced = Vec::new();
            for (member, ledger) in members {
                if let Some(l) = ledger {
                    unpriced.extend(crate::pricing::rating::unknown_region(
                        member, region, l, &period,
                    ));
                }
            }
            return Ok(DomainRated::UnknownRegion(unpriced));
        };
        let credit = credit(rbook, &period);
        let mut ctx = RatingContext::with_platform(rbook, period, platform);
        if domain.region.is_none()
            && let Some(index) = &self.index
        {
            ctx = ctx.with_index(index);
        }
        let mut rated = rate_payer(&ctx, domain.account, members, credit)?;
        if show_region {
            rated.invoice.region = Some(domain.region.map(str::to_string));
        }
        for u in &mut rated.unpriced {
            u.region = domain.region.map(str::to_string);
        }
        Ok(DomainRated::Rated(Box::new(rated)))
    }
}

/// [`Domains::view`] on its fields: the region views are made once each.
fn view_in<'s, 'b>(
    regions: &'s mut HashMap<Option<String>, Option<RegionView<'b>>>,
    (book, platform): (&'b PriceBook, &'b Platform),
    domain: Domain<'_>,
    label: &str,
) -> Result<Option<(&'s PriceBook, &'s Platform, Period)>, PeriodError> {
    let entry = regions
        .entry(domain.region.map(str::to_string))
        .or_insert_with(|| {
            let rbook = book.for_region(domain.region)?;
            Some((rbook, platform.in_region(domain.region)))
        });
    let Some((rbook, rplatform)) = entry else {
        return Ok(None);
    };
    let period = domain_period(book, rbook, domain.account, label)?;
    Ok(Some((&**rbook, &**rplatform, period)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `Domains` rating many home domains indexes the terms from the second on: every
    /// invoice is the one a fresh `Domains` (a pass over the book) gives.
    #[test]
    fn rating_with_the_index_equals_rating_by_a_pass_over_the_book() {
        let book = PriceBook::from_toml(
            r#"
currency = "CNY"
timezone = "UTC"
[skus."gpu"]
rate_per_hour = "10.00"
[[discounts]]
account = "b"
percent = "10"
[[credits]]
account = "c"
amount = "5.00"
[[reservations]]
account = "a"
sku = "gpu"
quantity = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
rate_per_hour = "6.00"
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let platform = Platform::default();
        let mut shared = Domains::new(&book, &platform);
        for account in ["a", "b", "c", "d", "a"] {
            let domain = Domain {
                account,
                region: None,
            };
            let rate = |d: &mut Domains<'_>| match d
                .rate(domain, "2026-11", None, |_, _| Decimal::from(5))
            {
                Ok(DomainRated::Rated(r)) => r.invoice,
                other => panic!("{other:?}"),
            };
            let alone = rate(&mut Domains::new(&book, &platform));
            assert_eq!(rate(&mut shared), alone, "{account}");
        }
        assert!(shared.index.is_some());
    }

    #[test]
    fn a_domain_id_reads_back_as_the_domain() {
        let home = Domain::parse("acme");
        assert_eq!(home.region, None);
        assert_eq!(home.id(), "acme");
        let sg = Domain::parse("acme@ap-singapore");
        assert_eq!((sg.account, sg.region), ("acme", Some("ap-singapore")));
        assert_eq!(sg.id(), "acme@ap-singapore");
    }
}
