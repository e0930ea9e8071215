//! Buyer and seller profiles (issue 12): the 增值税发票 fields printed on invoices, one row
//! per account in `account_profiles`, the seller's under [`SELLER_PROFILE`]. A profile is
//! validated ([`Profile::validate`]) before anything is written, and every change is a
//! `profile.put` command recorded in the transaction that writes it (a replay sets it again).
//! Setting the profile an account has already changes nothing and records nothing.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::AdminHandle;
use crate::conn::store::Store;
use crate::events::commands::Command;
use billing_core::profile::{Profile, ProfileError};

/// The key of the seller's profile (the platform issuing the invoices) in `account_profiles`:
/// `@` is outside the account id grammar (`A-Z a-z 0-9 . _ -`), so no account has it.
pub const SELLER_PROFILE: &str = "@seller";

#[derive(Debug, thiserror::Error)]
pub enum ProfileStoreError {
    #[error("unknown account {0:?}")]
    UnknownAccount(String),
    #[error("invalid profile: {0}")]
    Invalid(#[from] ProfileError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ProfileStoreError {
    fn from(e: sqlx::Error) -> Self {
        ProfileStoreError::Store(e.into())
    }
}

/// A profile as stored, with when it was set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredProfile {
    #[serde(flatten)]
    pub profile: Profile,
    pub updated_at_ms: i64,
}

async fn load(conn: &mut dyn Conn, key: &str) -> Result<Option<StoredProfile>> {
    let Some(row) = crate::conn::db::query(include_str!(
        "../../queries/shared/select_account_profile.sql"
    ))
    .bind(key)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let body: String = row.get("body");
    let profile: Profile = serde_json::from_str(&body)
        .map_err(|e| StoreError::Corrupt(format!("stored profile of {key:?}: {e}")))?;
    Ok(Some(StoredProfile {
        profile,
        updated_at_ms: row.get("updated_at_ms"),
    }))
}

impl AdminHandle<'_> {
    /// Sets the profile of `account` ([`SELLER_PROFILE`]: the seller's), replacing the one it
    /// had. `Ok(false)`: it had this profile already; nothing was written or recorded.
    pub async fn put_profile(
        &self,
        account: &str,
        profile: &Profile,
        now_ms: i64,
    ) -> Result<bool, ProfileStoreError> {
        profile.validate()?;
        let body =
            serde_json::to_string(profile).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        if account != SELLER_PROFILE && !account_exists(&mut tx, account).await? {
            return Err(ProfileStoreError::UnknownAccount(account.to_string()));
        }
        let stored = load(&mut tx, account).await?;
        if stored.as_ref().is_some_and(|s| s.profile == *profile) {
            return Ok(false);
        }
        // One command id per setting (`profile.put:{account}:{at_ms}`): each setting at least
        // a millisecond after the one before (see `Store::set_quotas`).
        let now_ms = stored.map_or(now_ms, |s| now_ms.max(s.updated_at_ms + 1));
        crate::conn::db::query(include_str!(
            "../../queries/shared/upsert_account_profile.sql"
        ))
        .bind(account)
        .bind(body)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        self.record_command(
            &mut tx,
            &Command::PutProfile {
                account: account.to_string(),
                profile: profile.clone(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The profile of `account` ([`SELLER_PROFILE`]: the seller's); None when none was set.
    /// An unknown account is an error, not None.
    pub async fn profile(&self, account: &str) -> Result<Option<StoredProfile>, ProfileStoreError> {
        let mut conn = self.pool.acquire().await?;
        if account != SELLER_PROFILE && !account_exists(&mut conn, account).await? {
            return Err(ProfileStoreError::UnknownAccount(account.to_string()));
        }
        Ok(load(&mut conn, account).await?)
    }
}

async fn account_exists(conn: &mut dyn Conn, account: &str) -> Result<bool> {
    Ok(crate::conn::db::query(include_str!(
        "../../queries/shared/select_account_exists.sql"
    ))
    .bind(account)
    .fetch_optional(&mut *conn)
    .await?
    .is_some())
}

impl Store {
    /// Applies a replayed `profile.put` (it was valid when first set, and the same rules
    /// apply now).
    pub(crate) async fn apply_profile(
        &self,
        account: &str,
        profile: &Profile,
        at_ms: i64,
    ) -> Result<()> {
        match self.admin().put_profile(account, profile, at_ms).await {
            Ok(_) => Ok(()),
            Err(ProfileStoreError::Store(e)) => Err(e),
            Err(e) => Err(StoreError::Corrupt(format!("replayed profile: {e}"))),
        }
    }
}
