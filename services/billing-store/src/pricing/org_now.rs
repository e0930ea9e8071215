//! The organization as it stands now (issue 27, roles and scopes): the tree API keys are
//! scoped by. It is the latest price book's `[[accounts]]` with the account terms set by
//! command merged in (`accounts` terms may set a parent), after the moves of accounts from
//! the current month or earlier ([`current_org`], which every reader of the current tree
//! calls).

use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;
use crate::pricing::books::{BookCache, Books};
use billing_core::pricebook::Org;
use std::sync::Arc;

/// The tree of accounts at `now_ms`: the latest price book's organization with its terms
/// merged, after the moves from the month holding `now_ms` (in the book's timezone) or
/// earlier (an empty one before any price book: every account its own root).
pub(crate) async fn current_org(
    conn: &mut dyn Conn,
    cache: &Arc<BookCache>,
    now_ms: i64,
) -> Result<Org> {
    let books = Books::load(conn, cache, true).await?;
    let Some(book) = books.1.latest() else {
        return Ok(Org::default());
    };
    match books.1.label_of(now_ms.div_euclid(1000)) {
        Some(label) => Ok(book.at_period(&label).org.clone()),
        None => Ok(book.org.clone()),
    }
}

impl AdminHandle<'_> {
    /// The tree of accounts at `now_ms` ([`current_org`]).
    pub async fn org(&self, now_ms: i64) -> Result<Org> {
        let mut conn = self.pool.acquire().await?;
        current_org(&mut *conn, &self.books, now_ms).await
    }

    /// The tree of accounts in period `label` (`YYYY-MM`): the latest price book's
    /// organization after the moves from that month or earlier.
    pub async fn org_in(&self, label: &str) -> Result<Org> {
        let mut conn = self.pool.acquire().await?;
        let books = Books::load(&mut *conn, &self.books, true).await?;
        Ok(books
            .1
            .latest()
            .map(|b| b.at_period(label).org.clone())
            .unwrap_or_default())
    }
}
