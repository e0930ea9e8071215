//! An account's notification settings: its budgets, its balance alert, its reminder windows
//! and its arrears policy, stored as one JSON document per account and changed by the
//! `notify.put` command (so `gpubill replay` rebuilds them).

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::NotifyHandle;
use crate::events::commands::Command;
pub use billing_core::notify::settings::{MAX_BUDGETS_PER_ACCOUNT, NotifySettings};

/// Why a change of settings is refused.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("unknown account {0:?}")]
    UnknownAccount(String),
    #[error("{0}")]
    Invalid(String),
    #[error("no budget {budget:?} on account {account:?}")]
    NoBudget { account: String, budget: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for NotifyError {
    fn from(e: sqlx::Error) -> Self {
        NotifyError::Store(StoreError::Db(e))
    }
}

/// The stored settings of `account` (defaults when it has none).
pub(crate) async fn settings_of(
    conn: &mut dyn crate::conn::db::Conn,
    account: &str,
) -> Result<NotifySettings> {
    Ok(settings_at(conn, account).await?.0)
}

/// The stored settings of `account` and when they were set (None: never).
async fn settings_at(
    conn: &mut dyn crate::conn::db::Conn,
    account: &str,
) -> Result<(NotifySettings, Option<i64>)> {
    let filter = "account = $1";
    let sql =
        include_str!("../../queries/shared/select_notify_settings.sql").replace("{filter}", filter);
    match crate::conn::db::query(&sql)
        .bind(account)
        .fetch_optional(conn)
        .await?
    {
        Some(r) => Ok((
            parse(&r.get::<String, _>("body"))?,
            Some(r.get("updated_at_ms")),
        )),
        None => Ok((NotifySettings::default(), None)),
    }
}

/// Stored settings, read back.
pub(crate) fn parse(body: &str) -> Result<NotifySettings> {
    serde_json::from_str(body)
        .map_err(|e| StoreError::Corrupt(format!("notify_settings.body: {e}")))
}

impl NotifyHandle<'_> {
    /// An account's settings (defaults when none were set).
    pub async fn settings(&self, account: &str) -> Result<NotifySettings> {
        let mut conn = self.pool.acquire().await?;
        settings_of(&mut conn, account).await
    }

    /// Changes an account's settings with `change`, validates the result, stores it and
    /// records the `notify.put` command, in one transaction. Returns the new settings.
    pub async fn change_settings(
        &self,
        account: &str,
        change: impl FnOnce(&mut NotifySettings) -> std::result::Result<(), NotifyError>,
        now_ms: i64,
    ) -> std::result::Result<NotifySettings, NotifyError> {
        if !self.admin().account_exists(account).await? {
            return Err(NotifyError::UnknownAccount(account.to_string()));
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let (mut settings, last) = settings_at(&mut tx, account).await?;
        // One `notify.put` per account and millisecond: its command id holds the time.
        let now_ms = last.map_or(now_ms, |l| now_ms.max(l + 1));
        change(&mut settings)?;
        settings.validate(account).map_err(NotifyError::Invalid)?;
        // A tag budget measures section 18's allocation: by the price book's allocation tag.
        let books = self.books(&mut tx).await?;
        let by = books.1.latest().and_then(|b| b.allocation_tag.clone());
        for (id, b) in &settings.budgets {
            if let billing_core::notify::BudgetScope::Tag { tag, .. } = &b.scope
                && by.as_deref() != Some(tag.as_str())
            {
                return Err(NotifyError::Invalid(match &by {
                    Some(by) => format!(
                        "budgets.{id}.scope.tag: {tag:?} is not the price book's allocation_tag {by:?}"
                    ),
                    None => format!(
                        "budgets.{id}.scope.tag: the price book has no allocation_tag to allocate {tag:?} by"
                    ),
                }));
            }
        }
        self.write_settings(&mut tx, account, &settings, now_ms)
            .await?;
        tx.commit().await?;
        Ok(settings)
    }

    /// Replaces an account's settings (a replayed `notify.put`).
    pub async fn put_settings(
        &self,
        account: &str,
        settings: &NotifySettings,
        now_ms: i64,
    ) -> std::result::Result<(), NotifyError> {
        let given = settings.clone();
        self.change_settings(
            account,
            move |s| {
                *s = given;
                Ok(())
            },
            now_ms,
        )
        .await
        .map(|_| ())
    }

    /// A replayed `notify.put`: [`Self::put_settings`], a refusal read as the commands topic
    /// and the database disagreeing.
    pub(crate) async fn apply_put(
        &self,
        account: &str,
        settings: &NotifySettings,
        at_ms: i64,
    ) -> Result<()> {
        self.put_settings(account, settings, at_ms)
            .await
            .map_err(|e| match e {
                NotifyError::Store(s) => s,
                other => StoreError::Corrupt(format!("replayed notify settings: {other}")),
            })
    }

    async fn write_settings(
        &self,
        tx: &mut dyn crate::conn::db::Conn,
        account: &str,
        settings: &NotifySettings,
        now_ms: i64,
    ) -> Result<()> {
        let body =
            serde_json::to_string(settings).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        crate::conn::db::query(include_str!(
            "../../queries/shared/upsert_notify_settings.sql"
        ))
        .bind(account)
        .bind(body)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        self.record_command(
            tx,
            &Command::PutNotify {
                account: account.to_string(),
                settings: settings.clone(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await
    }
}
