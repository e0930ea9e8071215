//! Section 18 in the engine: which billing domains get invoices, and whose ledgers rate them.
//!
//! Ledgers, provisional costs and wallets stay per billing domain (`account` or
//! `account@region`); an invoice is a payer's, rated over its members' ledgers in the
//! domain's region ([`billing_core::domain::Domains::rate_members`]). Who pays for whom is
//! the organization of the price book version (its account terms merged in) that rates the
//! period: a move of an account (an `accounts` term set by command) reaches the periods not
//! yet closed, never a closed one (`choices.rs`, "Organizations in the engine").

use billing_core::domain::Domain;
use billing_core::ledger::AccountLedger;
use billing_core::pricebook::PriceBook;
use std::collections::{BTreeSet, HashMap};

/// The id of the domain that invoices `id`'s usage: its account's payer, in its region.
pub(crate) fn payer_id(book: &PriceBook, id: &str) -> String {
    let d = Domain::parse(id);
    Domain {
        account: book.payer_of(d.account),
        region: d.region,
    }
    .id()
    .into_owned()
}

/// The ids of the domains `payer` (a domain id of a payer) is rated over: its members'
/// domains in its region, itself included, sorted by account.
pub(crate) fn member_ids(book: &PriceBook, payer: &str) -> Vec<String> {
    let d = Domain::parse(payer);
    book.members_of(d.account)
        .into_iter()
        .map(|m| {
            Domain {
                account: m,
                region: d.region,
            }
            .id()
            .into_owned()
        })
        .collect()
}

/// The domains whose ledgers rate `payer`: itself first, then its other members (as
/// `Loaded::read` takes them).
pub(crate) fn payer_first(book: &PriceBook, payer: &str) -> Vec<String> {
    let mut ids = vec![payer.to_string()];
    ids.extend(member_ids(book, payer).into_iter().filter(|m| m != payer));
    ids
}

/// The payers among `ids` and the payers of the others (each once, sorted).
pub(crate) fn payer_ids<'a>(
    book: &PriceBook,
    ids: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<String> {
    ids.into_iter().map(|id| payer_id(book, id)).collect()
}

/// `payer`'s members with their ledgers from `ledgers` (by domain id; a member missing there
/// has none), as [`billing_core::domain::Domains::rate_members`] takes them.
pub(crate) fn members_with<'l>(
    book: &'l PriceBook,
    payer: &'l str,
    ledgers: &'l HashMap<String, AccountLedger>,
) -> Vec<(&'l str, Option<&'l AccountLedger>)> {
    let d = Domain::parse(payer);
    book.members_of(book.payer_of(d.account))
        .into_iter()
        .map(|m| {
            let id = Domain {
                account: m,
                region: d.region,
            }
            .id();
            (m, ledgers.get(id.as_ref()))
        })
        .collect()
}

/// Loads into `ledgers` the whole ledger of every member `payer` has in any of `books` that
/// is not there yet (as `conn` sees it).
pub(crate) async fn load_members(
    conn: &mut dyn crate::conn::db::Conn,
    books: &[&PriceBook],
    payer: &str,
    ledgers: &mut HashMap<String, AccountLedger>,
) -> crate::conn::error::Result<()> {
    for book in books {
        for id in member_ids(book, payer) {
            if let std::collections::hash_map::Entry::Vacant(e) = ledgers.entry(id) {
                let ledger = crate::ledger::ledgers::load_ledger(conn, e.key()).await?;
                e.insert(ledger);
            }
        }
    }
    Ok(())
}
