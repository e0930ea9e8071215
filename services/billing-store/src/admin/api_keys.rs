//! API key rotation and revocation, and the admin audit log (issue 14).
//!
//! An account may hold several keys: a new one is added (shown once), the old one revoked
//! when the customer has switched, or both at once (a rotation: a new key of the same role
//! and account, the old one revoked, in one transaction). A key is named by its **key id**,
//! the first 16 hex digits of its SHA-256 (the key itself is never stored). Every request
//! looks its key up in the database (`select_account_for_key.sql`, nothing cached), so a
//! revoked key stops working at once on every engine. A revoked key stays listed with the
//! time it was revoked. Every key has a role ([`KeyRole`], issue 27) and names who made it.
//! Adding, rotating and revoking are commands (replayed by `gpubill replay`).
//!
//! The audit log is the commands themselves: every admin change is recorded in the outbox in
//! the transaction that makes it (`commands.rs`), and `audit` reads them back in order.

use crate::admin::keys::{ApiKeyId, KeyRole, NewKey};
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::AdminHandle;
use crate::events::commands::Command;
use billing_core::timestamp::format_secs;
use serde::Serialize;

/// An API key as listed: its id, role, when and by whom it was made, when it was revoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKeyInfo {
    pub key_id: ApiKeyId,
    pub role: KeyRole,
    pub created_at: String,
    /// The actor that made it (`admin`, `key:<key id>`); null for keys made before issue 27.
    pub created_by: Option<String>,
    /// When it was revoked (null: live).
    pub revoked_at: Option<String>,
}

/// What a live key grants: its account (the root of its scope) and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGrant {
    pub account: String,
    pub role: KeyRole,
}

/// One audit entry: an admin command as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: String,
    /// Who made it: `admin` (the admin token), or `system:<task>` for what the engine did by
    /// itself (`system:autoclose`); see [`crate::admin::actor`]. A command recorded before actors
    /// were kept (issue 24.7) reads `admin`.
    pub actor: String,
    /// The command's type (`pricebook.put`, `account.create`, `wallet.movement`, ...).
    pub action: String,
    pub command: serde_json::Value,
}

/// The actor in a command's outbox headers; `admin` for a command recorded without one.
fn actor_of(headers: Option<&str>) -> String {
    headers
        .and_then(|h| serde_json::from_str::<serde_json::Value>(h).ok())
        .and_then(|h| h["gpubill-actor"].as_str().map(String::from))
        .unwrap_or_else(|| "admin".to_string())
}

/// The id of a key hash: its first 16 hex digits.
pub fn key_id_of(key_hash: &str) -> ApiKeyId {
    ApiKeyId::new(key_hash.chars().take(16).collect::<String>())
}

impl AdminHandle<'_> {
    /// Adds an API key (by its hash) to an existing account.
    pub async fn add_api_key(&self, account: &str, key: &NewKey<'_>, now_ms: i64) -> Result<bool> {
        if !self.account_exists(account).await? {
            return Ok(false);
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        insert_key(&mut tx, account, key, now_ms).await?;
        self.record_command(
            &mut tx,
            &Command::AddApiKey {
                account: account.to_string(),
                key_hash: key.key_hash.to_string(),
                role: key.role,
                by: key.by.map(str::to_string),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Rotates the account's live key `key_id`: `new` (of the old key's role: `new.role` is
    /// ignored) is stored and the old key revoked, in one transaction, one command. The old
    /// key's role; None when the account has no such live key (nothing changes).
    pub async fn rotate_api_key(
        &self,
        account: &str,
        key_id: &ApiKeyId,
        new: &NewKey<'_>,
        now_ms: i64,
    ) -> Result<Option<KeyRole>> {
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let Some(old) =
            crate::conn::db::query(include_str!("../../queries/shared/select_live_api_key.sql"))
                .bind(account)
                .bind(key_id.as_str())
                .fetch_optional(&mut *tx)
                .await?
        else {
            tx.rollback().await?;
            return Ok(None);
        };
        let word: String = old.get("role");
        let role = crate::conn::error::stored(KeyRole::parse(&word), "api_keys", "role", &word)?;
        let new = NewKey {
            role,
            ..new.clone()
        };
        insert_key(&mut tx, account, &new, now_ms).await?;
        revoke(&mut tx, account, key_id, now_ms).await?;
        self.record_command(
            &mut tx,
            &Command::RotateApiKey {
                account: account.to_string(),
                key_id: key_id.clone(),
                key_hash: new.key_hash.to_string(),
                role,
                by: new.by.map(str::to_string),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(Some(role))
    }

    /// Revokes the account's key `key_id`; false when it has no such key.
    pub async fn revoke_api_key(
        &self,
        account: &str,
        key_id: &ApiKeyId,
        now_ms: i64,
    ) -> Result<bool> {
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        if !revoke(&mut tx, account, key_id, now_ms).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        self.record_command(
            &mut tx,
            &Command::RevokeApiKey {
                account: account.to_string(),
                key_id: key_id.clone(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The account's keys, revoked ones included, oldest first.
    pub async fn api_keys(&self, account: &str) -> Result<Vec<ApiKeyInfo>> {
        crate::conn::db::query(include_str!("../../queries/shared/select_account_keys.sql"))
            .bind(account)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let word: String = r.get("role");
                Ok(ApiKeyInfo {
                    key_id: key_id_of(&r.get::<String, _>("key_hash")),
                    role: crate::conn::error::stored(
                        KeyRole::parse(&word),
                        "api_keys",
                        "role",
                        &word,
                    )?,
                    created_at: format_secs(r.get::<i64, _>("created_at_ms").div_euclid(1000)),
                    created_by: r.get("created_by"),
                    revoked_at: r
                        .get::<Option<i64>, _>("revoked_at_ms")
                        .map(|ms| format_secs(ms.div_euclid(1000))),
                })
            })
            .collect()
    }

    /// The account and role of a live key, by its hash (None: unknown or revoked).
    pub async fn key_grant(&self, key_hash: &str) -> Result<Option<KeyGrant>> {
        let Some(r) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_for_key.sql"
        ))
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let word: String = r.get("role");
        Ok(Some(KeyGrant {
            account: r.get("account"),
            role: crate::conn::error::stored(KeyRole::parse(&word), "api_keys", "role", &word)?,
        }))
    }

    /// Admin commands after `after`, at most `limit`, in order.
    pub async fn audit(&self, after: i64, limit: i64) -> Result<Vec<AuditEntry>> {
        crate::conn::db::query(include_str!("../../queries/shared/select_audit.sql"))
            .bind(&self.topics().commands)
            .bind(after)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let payload: String = r.get("payload");
                let command: serde_json::Value = serde_json::from_str(&payload)
                    .map_err(|e| StoreError::Corrupt(format!("recorded command: {e}")))?;
                let action = crate::conn::error::stored(
                    command["type"].as_str().map(str::to_string),
                    "outbox",
                    "payload",
                    &payload,
                )?;
                Ok(AuditEntry {
                    seq: r.get("seq"),
                    at: format_secs(r.get::<i64, _>("created_at_ms").div_euclid(1000)),
                    actor: actor_of(r.get::<Option<String>, _>("headers").as_deref()),
                    action,
                    command,
                })
            })
            .collect()
    }
}

/// Stores a key row (the caller records the command).
pub(crate) async fn insert_key(
    conn: &mut dyn crate::conn::db::Conn,
    account: &str,
    key: &NewKey<'_>,
    now_ms: i64,
) -> Result<()> {
    crate::conn::db::query(include_str!("../../queries/shared/insert_api_key.sql"))
        .bind(key.key_hash)
        .bind(account)
        .bind(now_ms)
        .bind(key.role.as_str())
        .bind(key.by)
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks the account's live key `key_id` revoked at `now_ms`; false when it has none.
async fn revoke(
    conn: &mut dyn crate::conn::db::Conn,
    account: &str,
    key_id: &ApiKeyId,
    now_ms: i64,
) -> Result<bool> {
    Ok(
        crate::conn::db::query(include_str!("../../queries/shared/revoke_api_key.sql"))
            .bind(account)
            .bind(key_id.as_str())
            .bind(now_ms)
            .execute(conn)
            .await?
            .rows_affected()
            > 0,
    )
}
