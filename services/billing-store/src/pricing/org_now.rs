//! The organization as it stands now (issue 27, roles and scopes): the tree API keys are
//! scoped by. Today it is the latest price book's `[[accounts]]` with the account terms set by
//! command merged in (`accounts` terms may set a parent); engine-side moves of accounts are
//! to be applied here, in [`current_org`], which every reader of the current tree calls.

use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;
use crate::pricing::books::{BookCache, Books};
use billing_core::pricebook::Org;
use std::sync::Arc;

/// The current tree of accounts: the latest price book's organization with its terms merged
/// (an empty one before any price book: every account its own root).
pub(crate) async fn current_org(conn: &mut dyn Conn, cache: &Arc<BookCache>) -> Result<Org> {
    let books = Books::load(conn, cache, true).await?;
    Ok(books.1.latest().map(|b| b.org.clone()).unwrap_or_default())
}

impl AdminHandle<'_> {
    /// The current tree of accounts ([`current_org`]).
    pub async fn org(&self) -> Result<Org> {
        let mut conn = self.pool.acquire().await?;
        current_org(&mut *conn, &self.books).await
    }
}
