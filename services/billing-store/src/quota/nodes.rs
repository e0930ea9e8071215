//! Budgets per node (issue 27): a `spend_limit` of an account with sub-accounts bounds its
//! whole subtree, so a child cannot spend past any ancestor's limit.
//!
//! What a node spends in a period (section 18's provisional rows, see `provisional.rs`): the
//! row of every payer of its subtree (itself included; a payer's row is its whole invoice,
//! which pools its members, all of them below it), plus the row of every account of its
//! subtree whose payer is outside it (its allocated part of that payer's invoice). A period
//! no batch touched has no row: it is rated on read, as for an account's own quotas
//! (`provisional_reads::measure`). At authorization, the live holds of every account of the
//! subtree count too.
//!
//! Regions (section 19): a node's budget is per billing domain, like every quota. A hold in
//! region `r` counts against the quotas of `node@r`, whose subtree is the same accounts in
//! region `r` (`child@r`): the organization is the price book's, the domains are the
//! region's. A home hold never counts against a regional budget, nor the reverse.
//!
//! Atomicity: authorizations are decided one group at a time, under one lock for all
//! accounts (PostgreSQL: a transaction-scoped advisory lock shared by every process; SQLite:
//! the writer lock), so the ancestors' budgets need no lock of their own: the checks of a
//! group and the holds it places are one transaction, and no other group runs meanwhile.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::pricing::books::Books;
use crate::pricing::provisional::Measure;
use crate::pricing::provisional_reads::measure;
use crate::quota::limits::{Quotas, live_holds};
use billing_core::domain::Domain;
use billing_core::pricebook::PriceBook;
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};

/// The parent of `account` in `book`'s organization (None: a root, or no such account).
/// TODO(merge): Org::ancestors (billing-core org.rs) replaces this walk.
fn parent_of<'b>(book: &'b PriceBook, account: &str) -> Option<&'b str> {
    book.account_settings
        .iter()
        .find(|s| s.id == account)
        .and_then(|s| s.parent.as_deref())
}

/// `account`'s ancestors in `book`'s organization, nearest first (the book refuses cycles
/// and trees deeper than `billing_core` allows; the walk stops on a repeat all the same).
/// TODO(merge): Org::ancestors
pub(crate) fn ancestors<'b>(book: &'b PriceBook, account: &str) -> Vec<&'b str> {
    let mut out: Vec<&'b str> = Vec::new();
    let mut at = parent_of(book, account);
    while let Some(p) = at {
        if p == account || out.contains(&p) {
            break;
        }
        out.push(p);
        at = parent_of(book, p);
    }
    out
}

/// Whether `account` has sub-accounts in `book`'s organization.
pub(crate) fn has_children(book: &PriceBook, account: &str) -> bool {
    book.account_settings
        .iter()
        .any(|s| s.parent.as_deref() == Some(account))
}

/// The accounts of `node`'s subtree, itself included, sorted.
/// TODO(merge): Org::ancestors (a subtree is the accounts `node` is an ancestor of).
pub(crate) fn subtree(book: &PriceBook, node: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::from([node.to_string()]);
    for s in &book.account_settings {
        if ancestors(book, &s.id).contains(&node) {
            out.insert(s.id.clone());
        }
    }
    out
}

/// The nodes whose budget (`spend_limit` over a subtree) a hold or usage of `account` counts
/// against: the account itself when it has sub-accounts, then its ancestors, nearest first.
/// An account without sub-accounts is measured by its own row, as before organizations.
pub(crate) fn budget_nodes<'b>(book: &'b PriceBook, account: &'b str) -> Vec<&'b str> {
    let mut out = Vec::new();
    if has_children(book, account) {
        out.push(account);
    }
    out.extend(ancestors(book, account));
    out
}

/// What `node` (a billing domain id: `account` or `account@region`) spends in period
/// `label`: the rows of its subtree (module docs), from `measured` (rows a batch just wrote,
/// by (domain id, label)) or as `conn` sees them.
pub(crate) async fn node_spend(
    conn: &mut dyn Conn,
    books: &Books,
    book: &PriceBook,
    node: &str,
    label: &str,
    measured: Option<&HashMap<(String, String), Measure>>,
) -> Result<Decimal> {
    let d = Domain::parse(node);
    let below = subtree(book, d.account);
    let mut total = Decimal::ZERO;
    for m in &below {
        let payer = book.payer_of(m);
        // A member whose payer is in the subtree is in the payer's row already.
        if payer != m && below.contains(payer) {
            continue;
        }
        let id = Domain {
            account: m,
            region: d.region,
        }
        .id()
        .into_owned();
        let key = (id, label.to_string());
        total += match measured.and_then(|ms| ms.get(&key)) {
            Some(m) => m.0,
            None => measure(conn, books, &key.0, label)
                .await?
                .map_or(Decimal::ZERO, |m| m.0),
        };
    }
    Ok(total)
}

/// A node's budget within one authorization group: its limit, what its subtree spends and
/// holds (with the holds the group placed so far).
#[derive(Debug, Clone)]
pub(crate) struct NodeBudget {
    pub(crate) limit: Decimal,
    pub(crate) spent: Decimal,
    pub(crate) held: Decimal,
}

/// The budget of `node` (a domain id) for an authorization group, None when it has no
/// `spend_limit`: its quotas, its subtree's spend and live holds as `conn` sees them, plus
/// the group's holds `placed` so far in its subtree (not stored yet).
pub(crate) async fn node_budget(
    conn: &mut dyn Conn,
    books: &Books,
    book: &PriceBook,
    (node, label, now_ms): (&str, &str, i64),
    placed: &[crate::quota::holds::Hold],
) -> Result<Option<NodeBudget>> {
    let row = crate::conn::db::query(include_str!("../../queries/shared/select_quotas.sql"))
        .bind(node)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let quotas: Quotas = serde_json::from_str(&row.get::<String, _>("body"))
        .map_err(|e| StoreError::Corrupt(format!("stored quotas: {e}")))?;
    let Some(limit) = quotas.spend_limit else {
        return Ok(None);
    };
    let d = Domain::parse(node);
    let mut held = Decimal::ZERO;
    let mut ids = BTreeSet::new();
    for m in subtree(book, d.account) {
        let id = Domain {
            account: &m,
            region: d.region,
        }
        .id()
        .into_owned();
        held += live_holds(&mut *conn, &id, now_ms)
            .await?
            .iter()
            .map(|h| h.amount)
            .sum::<Decimal>();
        ids.insert(id);
    }
    held += placed
        .iter()
        .filter(|h| ids.contains(&h.account))
        .map(|h| h.amount)
        .sum::<Decimal>();
    let spent = node_spend(conn, books, book, node, label, None).await?;
    Ok(Some(NodeBudget { limit, spent, held }))
}
