//! The list of accounts (issue 13: the admin pages of the web console): registered accounts in
//! id order, each with its quotas, one page at a time. Quotas are parsed strictly, as
//! [`Store::quotas`] does: a stored body that does not parse is an error, never "no quotas".

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::AdminHandle;
use crate::events::commands::Command;
use crate::quota::limits::Quotas;
use std::collections::BTreeSet;

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

impl AdminHandle<'_> {
    /// Accounts whose id sorts after `after` (all when None), in id order, at most `limit`
    /// (1 to [`MAX_ACCOUNTS_PAGE`]).
    pub async fn accounts(&self, after: Option<&str>, limit: i64) -> Result<Vec<AccountSummary>> {
        assert!(
            (1..=MAX_ACCOUNTS_PAGE).contains(&limit),
            "accounts page of {limit}: callers check the limit"
        );
        // Every account id has at least one character, so "" sorts before all of them.
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_accounts_page.sql"
        ))
        .bind(after.unwrap_or(""))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let id: String = r.get("id");
                let quotas = r
                    .get::<Option<String>, _>("body")
                    .map(|body| {
                        serde_json::from_str::<Quotas>(&body).map_err(|e| {
                            StoreError::Corrupt(format!("stored quotas of {id:?}: {e}"))
                        })
                    })
                    .transpose()?;
                Ok(AccountSummary {
                    created_at_ms: r.get("created_at_ms"),
                    quotas,
                    quotas_updated_at_ms: r.get("updated_at_ms"),
                    id,
                })
            })
            .collect()
    }
}

impl AdminHandle<'_> {
    /// Creates an account with one API key (stored as its hash).
    /// Its key is an owner's, made by the running actor ([`crate::admin::actor::current`]).
    pub async fn create_account(&self, id: &str, key_hash: &str, now_ms: i64) -> Result<()> {
        let by = crate::admin::actor::current();
        self.create_account_by(id, key_hash, Some(&by), now_ms)
            .await
    }

    /// [`Self::create_account`] naming who made it (`by`, kept as its key's `created_by`;
    /// None: not known, as in a replayed command recorded before issue 27).
    pub async fn create_account_by(
        &self,
        id: &str,
        key_hash: &str,
        by: Option<&str>,
        now_ms: i64,
    ) -> Result<()> {
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let inserted =
            crate::conn::db::query(include_str!("../../queries/shared/insert_account.sql"))
                .bind(id)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if inserted == 0 {
            return Err(StoreError::AccountExists(id.to_string()));
        }
        let key = crate::admin::keys::NewKey {
            key_hash,
            role: crate::admin::keys::KeyRole::Owner,
            by,
        };
        crate::admin::api_keys::insert_key(&mut tx, id, &key, now_ms).await?;
        self.record_command(
            &mut tx,
            &Command::CreateAccount {
                id: id.to_string(),
                key_hash: key_hash.to_string(),
                by: by.map(str::to_string),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The account an API key belongs to.
    pub async fn account_for_key(&self, key_hash: &str) -> Result<Option<String>> {
        let row = crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_for_key.sql"
        ))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.get::<String, _>("account")))
    }

    pub async fn account_exists(&self, id: &str) -> Result<bool> {
        Ok(crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_exists.sql"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .is_some())
    }

    /// Accounts named by an accepted event or registered. Every accepted event left a ledger
    /// key or an egress row, which (unlike its identity) compaction never drops.
    pub async fn known_accounts(&self) -> Result<BTreeSet<String>> {
        let mut conn = self.pool.acquire().await?;
        known_in(&mut *conn).await
    }
}

/// [`AdminHandle::known_accounts`] on `conn` (in a transaction, as it sees them).
pub(crate) async fn known_in(conn: &mut dyn crate::conn::db::Conn) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for q in [
        include_str!("../../queries/shared/select_ledger_key_accounts.sql"),
        include_str!("../../queries/shared/select_egress_accounts.sql"),
        include_str!("../../queries/shared/select_rental_accounts.sql"),
        include_str!("../../queries/shared/select_account_ids.sql"),
    ] {
        for r in crate::conn::db::query(q).fetch_all(&mut *conn).await? {
            out.insert(r.get::<String, _>("account"));
        }
    }
    Ok(out)
}
