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

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::pricing::books::Books;
use crate::pricing::provisional::Measure;
use crate::pricing::provisional_reads::measure;
use billing_core::domain::Domain;
use billing_core::pricebook::PriceBook;
use billing_core::quota::Quotas;
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};

/// The tree of a price book's organization (its `[[accounts]]` and `accounts` terms): its
/// parents are the book's ([`billing_core::pricebook::Org::ancestors`]); the children are
/// indexed once per authorization group or batch, so that a subtree is walked once.
pub(crate) struct Tree<'b> {
    book: &'b PriceBook,
    children: HashMap<&'b str, Vec<&'b str>>,
}

impl<'b> Tree<'b> {
    pub(crate) fn of(book: &'b PriceBook) -> Tree<'b> {
        let mut children: HashMap<&'b str, Vec<&'b str>> = HashMap::new();
        for s in &book.account_settings {
            if let Some(p) = s.parent.as_deref() {
                children.entry(p).or_default().push(s.id.as_str());
            }
        }
        Tree { book, children }
    }

    /// `account`'s ancestors, nearest first.
    pub(crate) fn ancestors(&self, account: &str) -> Vec<&'b str> {
        self.book.org.ancestors(account)
    }

    /// Whether `account` has sub-accounts.
    pub(crate) fn has_children(&self, account: &str) -> bool {
        self.children.contains_key(account)
    }

    /// The accounts of `node`'s subtree, itself included, sorted.
    pub(crate) fn subtree(&self, node: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::from([node.to_string()]);
        let mut todo: Vec<&str> = self.children.get(node).cloned().unwrap_or_default();
        while let Some(c) = todo.pop() {
            if out.insert(c.to_string()) {
                todo.extend(self.children.get(c).into_iter().flatten());
            }
        }
        out
    }

    /// The nodes whose budget (`spend_limit` over a subtree) a hold or usage of `account`
    /// counts against: the account itself when it has sub-accounts, then its ancestors,
    /// nearest first. An account without sub-accounts is measured by its own row, as before
    /// organizations.
    pub(crate) fn budget_nodes<'a>(&self, account: &'a str) -> Vec<&'a str>
    where
        'b: 'a,
    {
        let mut out = Vec::new();
        if self.has_children(account) {
            out.push(account);
        }
        out.extend(self.ancestors(account));
        out
    }
}

/// What `node` (a billing domain id: `account` or `account@region`) spends in period
/// `label`: the rows of its subtree (module docs), from `measured` (rows a batch just wrote,
/// by (domain id, label)) or as `conn` sees them.
pub(crate) async fn node_spend(
    conn: &mut dyn Conn,
    books: &Books,
    (book, tree): (&PriceBook, &Tree<'_>),
    node: &str,
    label: &str,
    measured: Option<&HashMap<(String, String), Measure>>,
) -> Result<Decimal> {
    let d = Domain::parse(node);
    let below = tree.subtree(d.account);
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
    (conn, backend): (&mut dyn Conn, Backend),
    books: &Books,
    (book, tree): (&PriceBook, &Tree<'_>),
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
    let ids: BTreeSet<String> = tree
        .subtree(d.account)
        .iter()
        .map(|m| {
            Domain {
                account: m,
                region: d.region,
            }
            .id()
            .into_owned()
        })
        .collect();
    // Holds before the spend, as for an account's own quotas (`spent.rs`): a fold capturing
    // a hold in between can only make its usage count twice, never not at all.
    let mut held = held_by(conn, backend, &ids, now_ms).await?;
    held += placed
        .iter()
        .filter(|h| ids.contains(&h.account))
        .map(|h| h.amount)
        .sum::<Decimal>();
    let spent = node_spend(conn, books, (book, tree), node, label, None).await?;
    Ok(Some(NodeBudget { limit, spent, held }))
}

/// What the live holds of the domains `ids` reserve at `now_ms`, in one statement.
async fn held_by(
    conn: &mut dyn Conn,
    backend: Backend,
    ids: &BTreeSet<String>,
    now_ms: i64,
) -> Result<Decimal> {
    let names: Vec<&str> = ids.iter().map(String::as_str).collect();
    let sql = include_str!("../../queries/shared/select_live_hold_amounts.sql")
        .replace("{filter}", &crate::conn::sql::in_list("account", backend));
    let mut held = Decimal::ZERO;
    for r in crate::conn::db::query(&sql)
        .bind(&names[..])
        .bind(now_ms)
        .fetch_all(&mut *conn)
        .await?
    {
        let amount: String = r.get("amount");
        held +=
            crate::conn::error::stored(amount.parse::<Decimal>().ok(), "holds", "amount", &amount)?;
    }
    Ok(held)
}
