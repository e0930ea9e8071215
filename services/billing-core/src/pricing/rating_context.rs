//! What rating needs besides the rules: the period's context (price book, off-peak schedule,
//! platform events), the usage that cannot be priced, and the errors of rating. Below
//! [`crate::pricing::rating`] and the modules of its rules, which all read them.

use crate::events::event_fields::Class;
use crate::pricing::account_index::{TermsIndex, TermsOfAccount};
use crate::pricing::invoice::Unit;
use crate::pricing::offpeak::Schedule;
use crate::pricing::period::Period;
use crate::pricing::pricebook::PriceBook;
use crate::rental::platform::{NO_PLATFORM, Platform};
use rust_decimal::Decimal;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    /// What the account owes for the period could exceed [`crate::pricing::magnitude::MAX_AMOUNT`]:
    /// accepted but absurd magnitudes (rates near the price book's limit times a fleet's worth of
    /// unit-seconds). Refused before any arithmetic could overflow a `Decimal` or lose the 2 minor
    /// digits.
    #[error(
        "account {account:?} could owe more than {max} for the period (bound {bound}): refusing to rate absurd magnitudes"
    )]
    AmountTooLarge {
        account: String,
        bound: String,
        max: Decimal,
    },
    /// Section 18: only payers get invoices; `account` is paid for by `payer`.
    #[error("account {account:?} is not a payer: its invoices are its payer {payer:?}'s")]
    NotAPayer { account: String, payer: String },
    #[error("egress of account {account:?} to {dest:?} is too large to rate ({bytes} bytes)")]
    EgressOverflow {
        account: String,
        dest: String,
        bytes: u128,
    },
}

/// Usage that stays in the ledger but cannot be rated (section 3, "Unpriced usage").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unpriced {
    pub account: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    pub quantity: Decimal,
    pub unit: Unit,
    pub why: String,
    /// Section 19: the region of the usage (`None`: home, not shown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

/// What can stop rating a month for `gpubill rate` ([`crate::pricing::rating::rate_month`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateMonthError {
    #[error(transparent)]
    Period(#[from] crate::pricing::period::PeriodError),
    #[error(transparent)]
    Rating(#[from] RatingError),
    /// Section 19: usage in a region the price book does not name (an engine rating one
    /// domain; `gpubill rate` lists such usage as unpriced).
    #[error("region {0:?} is not in the price book")]
    UnknownRegion(String),
}

/// What rating a period needs besides the ledger, computed once for all accounts.
#[derive(Debug, Clone)]
pub struct RatingContext<'a> {
    pub book: &'a PriceBook,
    pub period: Period,
    pub(crate) schedule: Schedule,
    /// Spot curves and node faults (sections 9 and 10).
    pub platform: &'a Platform,
    /// Per node, its merged faults.
    pub(crate) faults: BTreeMap<&'a str, Vec<(i64, i64)>>,
    /// Every account's terms, when the context rates many accounts ([`RatingContext::indexed`],
    /// or one index shared by many contexts: [`RatingContext::with_index`]).
    terms: Option<Cow<'a, TermsIndex<'a>>>,
    /// Rate on-demand usage key by key even where the keys' sum would do
    /// ([`crate::pricing::summed`]): tests compare the two.
    pub(crate) by_keys: bool,
}

impl<'a> RatingContext<'a> {
    /// A context without platform events (no spot curves, no node faults).
    pub fn new(book: &'a PriceBook, period: Period) -> Self {
        Self::with_platform(book, period, &NO_PLATFORM)
    }

    /// A context reading the platform events of `platform`.
    pub fn with_platform(book: &'a PriceBook, period: Period, platform: &'a Platform) -> Self {
        let schedule = Schedule::new(book.timezone, &book.offpeak, period.start, period.end);
        RatingContext {
            book,
            period,
            schedule,
            platform,
            faults: platform.faults().collect(),
            terms: None,
            by_keys: false,
        }
    }

    /// The same context rating every account key by key, never from the keys' summed usage
    /// ([`crate::pricing::summed`]): what tests and benchmarks compare the sum with.
    pub fn by_keys(mut self) -> Self {
        self.by_keys = true;
        self
    }

    /// The same context with every account's terms indexed once, for rating many accounts
    /// with it: each then finds its terms without a pass over the whole book.
    pub fn indexed(mut self) -> Self {
        self.terms = Some(Cow::Owned(TermsOfAccount::index(self.book)));
        self
    }

    /// The same context finding each account's terms in `index`, made once of this
    /// context's book with [`TermsOfAccount::index`] and shared by the contexts rating with it.
    pub fn with_index(mut self, index: &'a TermsIndex<'a>) -> Self {
        self.terms = Some(Cow::Borrowed(index));
        self
    }

    /// The account's terms in the book: from the index if the context has one, else by one
    /// pass over the book.
    pub fn terms_of(&self, account: &str) -> Cow<'_, TermsOfAccount<'a>> {
        match &self.terms {
            Some(index) => index
                .get(account)
                .map_or_else(|| Cow::Owned(TermsOfAccount::default()), Cow::Borrowed),
            None => Cow::Owned(TermsOfAccount::of(self.book, account)),
        }
    }
}
