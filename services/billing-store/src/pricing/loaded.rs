//! What rating some accounts' open periods reads ([`Loaded`]: their ledgers, the credits
//! their issued invoices consumed, the platform's spot curves and faults) and the rating of
//! one payer's period from it, which provisional costs ([`crate::pricing::provisional`]),
//! quotas and authorizations measure with.

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::sql::Val;
use crate::ledger::ledgers::load_ledgers;
use crate::pricing::issued::{IssuedCredit, credit_balance, issued_credits};
use crate::pricing::payers::{members_with, payer_first, payer_id};
use billing_core::domain::{Domain, DomainRated, Domains};
use billing_core::ledger::AccountLedger;
use billing_core::period::Period;
use billing_core::platform::Platform;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{RateMonthError, Rated as CoreRated};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};

/// Unit-seconds per sku (on-demand, reserved and spot usage).
pub type UnitSeconds = BTreeMap<String, Decimal>;

/// What quotas measure of a period: its provisional total and unit-seconds per sku.
pub(crate) type Measure = (Decimal, UnitSeconds);

/// What ratings of some accounts read: their ledgers, the credits their issued invoices
/// consumed and the compensation they earned, and the platform's spot curves and node
/// faults, loaded in a few statements whatever the number of accounts.
pub(crate) struct Loaded {
    pub(crate) ledgers: HashMap<String, AccountLedger>,
    issued: HashMap<String, Vec<IssuedCredit>>,
    pub(crate) platform: Platform,
}

impl Loaded {
    /// `accounts` as `conn` sees them (with `backend`, in one parameter; without, the ledgers
    /// one account at a time and the issued credits of the first only: a payer, then its
    /// members).
    pub(crate) async fn read(
        conn: &mut dyn Conn,
        backend: Option<Backend>,
        accounts: &[&str],
        windows: &[(i64, i64)],
    ) -> Result<Loaded> {
        let ledgers = match backend {
            Some(_) => load_ledgers(conn, backend, accounts, windows).await?,
            None => {
                let mut all = HashMap::new();
                for a in accounts {
                    all.extend(load_ledgers(conn, None, &[a], windows).await?);
                }
                all
            }
        };
        let (filter, param) = match backend {
            Some(b) => (crate::conn::sql::in_list("account", b), Val::from(accounts)),
            None => (
                crate::conn::sql::ONE_ACCOUNT.to_string(),
                Val::Text(accounts.first().map(|a| a.to_string()).unwrap_or_default()),
            ),
        };
        let issued = issued_credits(conn, &filter, &param).await?;
        let platform = crate::ledger::rental::load_platform(conn).await?;
        Ok(Loaded {
            ledgers,
            issued,
            platform,
        })
    }

    /// What ratings of `accounts` read besides their ledgers (issued credits, the platform).
    pub(crate) async fn read_without_ledgers(
        conn: &mut dyn Conn,
        backend: Backend,
        accounts: &[&str],
    ) -> Result<Loaded> {
        let filter = crate::conn::sql::in_list("account", backend);
        let issued = issued_credits(conn, &filter, &Val::from(accounts)).await?;
        let platform = crate::ledger::rental::load_platform(conn).await?;
        Ok(Loaded {
            ledgers: HashMap::new(),
            issued,
            platform,
        })
    }

    /// With `ledgers` (account → ledger and the windows it is complete over); returns the
    /// windows apart.
    pub(crate) fn with_ledgers(
        mut self,
        ledgers: HashMap<String, (AccountLedger, Vec<(i64, i64)>)>,
    ) -> (Loaded, HashMap<String, Vec<(i64, i64)>>) {
        let mut windows = HashMap::new();
        for (account, (ledger, w)) in ledgers {
            windows.insert(account.clone(), w);
            self.ledgers.insert(account, ledger);
        }
        (self, windows)
    }

    /// `account`'s period rated with the invoices' own function (credits left over from issued
    /// invoices applied): the provisional invoice and the unit-seconds of each sku in use.
    ///
    /// `id` is a billing domain (`billing_core::domain`): the account at home, or
    /// `account@region` rated with the region's book in its currency (section 19).
    pub(crate) fn rate(
        &self,
        id: &str,
        book: &PriceBook,
        period: &Period,
    ) -> std::result::Result<CoreRated, RateMonthError> {
        self.rate_in((&mut Domains::new(book, &self.platform), book), id, period)
    }

    /// [`Loaded::rate`] with the books and platforms of `domains` (one price book version's
    /// regions, made once for every domain a batch rates with it; `book` that version). A
    /// payer is rated over its members' ledgers (section 18: all of them must be loaded).
    pub(crate) fn rate_in(
        &self,
        (domains, book): (&mut Domains<'_>, &PriceBook),
        id: &str,
        period: &Period,
    ) -> std::result::Result<CoreRated, RateMonthError> {
        let issued = self.issued.get(id).map_or(&[][..], Vec::as_slice);
        let domain = Domain::parse(id);
        let members = members_with(book, id, &self.ledgers);
        let rated = domains.rate_members(domain, &period.label, &members, |rbook, p| {
            credit_balance(rbook, domain.account, issued, p)
        })?;
        match rated {
            DomainRated::Rated(r) => Ok(*r),
            DomainRated::UnknownRegion(_) => Err(RateMonthError::UnknownRegion(
                domain.region.unwrap_or_default().to_string(),
            )),
        }
    }
}

/// The period of `account`'s payer (section 18; itself when it pays for itself) as `conn`
/// sees it, rated (see [`Loaded::rate`]). Everything that measures an open period measures
/// with this ([`CoreRated::member_measure`] for an account that does not pay for itself).
pub(crate) async fn rate_period(
    conn: &mut dyn Conn,
    account: &str,
    book: &PriceBook,
    period: &Period,
) -> Result<CoreRated> {
    let payer = payer_id(book, account);
    let ids = payer_first(book, &payer);
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    Loaded::read(conn, None, &ids, &[(period.start, period.end)])
        .await?
        .rate(&payer, book, period)
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// What quotas measure of `account` in a rating of its payer: the payer's invoice, or the
/// account's part of it (section 18).
pub(crate) fn measure_of(rated: &CoreRated, account: &str) -> Measure {
    rated.member_measure(Domain::parse(account).account)
}
