//! The list of accounts (issue 13: the admin pages of the web console): registered accounts in
//! id order, each with its quotas, one page at a time. Quotas are parsed strictly, as
//! [`Store::quotas`] does: a stored body that does not parse is an error, never "no quotas".

use crate::quota::Quotas;
use crate::{Result, Store, StoreError};

/// Most accounts one page holds (`GET /v1/admin/accounts?limit=`), as for dead letters.
pub const MAX_ACCOUNTS_PAGE: i64 = 1_000;

/// A registered account as the admin sees it in a list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AccountSummary {
    pub id: String,
    pub created_at_ms: i64,
    /// None: no quotas were ever set.
    pub quotas: Option<Quotas>,
    pub quotas_updated_at_ms: Option<i64>,
}

impl Store {
    /// Accounts whose id sorts after `after` (all when None), in id order, at most `limit`
    /// (1 to [`MAX_ACCOUNTS_PAGE`]).
    pub async fn accounts(&self, after: Option<&str>, limit: i64) -> Result<Vec<AccountSummary>> {
        assert!(
            (1..=MAX_ACCOUNTS_PAGE).contains(&limit),
            "accounts page of {limit}: callers check the limit"
        );
        // Every account id has at least one character, so "" sorts before all of them.
        let rows = crate::db::query(include_str!("../queries/shared/select_accounts_page.sql"))
            .bind(after.unwrap_or(""))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|r| {
                let id: String = r.get(0);
                let quotas = r
                    .get::<Option<String>, _>(2)
                    .map(|body| {
                        serde_json::from_str::<Quotas>(&body).map_err(|e| {
                            StoreError::Corrupt(format!("stored quotas of {id:?}: {e}"))
                        })
                    })
                    .transpose()?;
                Ok(AccountSummary {
                    created_at_ms: r.get(1),
                    quotas,
                    quotas_updated_at_ms: r.get(3),
                    id,
                })
            })
            .collect()
    }
}
