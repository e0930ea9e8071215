//! API key rotation and revocation, and the admin audit log (issue 14).
//!
//! An account may hold several keys: a new one is added (shown once), the old one revoked
//! when the customer has switched. A key is named by its **key id**, the first 16 hex digits
//! of its SHA-256 (the key itself is never stored). Every request looks its key up in the
//! database (`select_account_for_key.sql`, nothing cached), so a revoked key stops working at
//! once on every engine. Adding and revoking are commands (replayed by `gpubill replay`).
//!
//! The audit log is the commands themselves: every admin change is recorded in the outbox in
//! the transaction that makes it (`commands.rs`), and `audit` reads them back in order.

use crate::admin::keys::ApiKeyId;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::AdminHandle;
use crate::events::commands::Command;
use billing_core::timestamp::format_secs;
use serde::Serialize;

/// An API key as listed: its id and when it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKeyInfo {
    pub key_id: ApiKeyId,
    pub created_at: String,
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
    pub async fn add_api_key(&self, account: &str, key_hash: &str, now_ms: i64) -> Result<bool> {
        if !self.account_exists(account).await? {
            return Ok(false);
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        crate::conn::db::query(include_str!("../../queries/shared/insert_api_key.sql"))
            .bind(key_hash)
            .bind(account)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        self.record_command(
            &mut tx,
            &Command::AddApiKey {
                account: account.to_string(),
                key_hash: key_hash.to_string(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
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
        let gone = crate::conn::db::query(include_str!("../../queries/shared/delete_api_key.sql"))
            .bind(account)
            .bind(key_id.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if gone == 0 {
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

    /// The account's keys, oldest first.
    pub async fn api_keys(&self, account: &str) -> Result<Vec<ApiKeyInfo>> {
        Ok(
            crate::conn::db::query(include_str!("../../queries/shared/select_account_keys.sql"))
                .bind(account)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(|r| ApiKeyInfo {
                    key_id: key_id_of(&r.get::<String, _>("key_hash")),
                    created_at: format_secs(r.get::<i64, _>("created_at_ms").div_euclid(1000)),
                })
                .collect(),
        )
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
