//! An account's notification settings: its budgets, its balance alert, its reminder windows
//! and its arrears policy, stored as one JSON document per account and changed by the
//! `notify.put` command (so `gpubill replay` rebuilds them).

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::NotifyHandle;
use crate::events::commands::Command;
use billing_core::notify::{ArrearsPolicy, BalanceAlert, Budget, BudgetScope, ReminderPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most budgets one account may have.
pub const MAX_BUDGETS_PER_ACCOUNT: usize = 25;

/// What an account asked to be told, and its arrears policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    /// By budget id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub budgets: BTreeMap<String, Budget>,
    /// Low prepaid balance, by amount or by hours left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<BalanceAlert>,
    /// Expiry and renewal reminders (absent: none are sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminders: Option<ReminderPolicy>,
    /// The arrears sequence (absent: the account is never stopped for arrears).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrears: Option<ArrearsPolicy>,
}

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

impl NotifySettings {
    /// Checks every part; the error names the field (`budgets.b1.thresholds[2]: ...`).
    pub fn validate(&self, account: &str) -> std::result::Result<(), String> {
        if self.budgets.len() > MAX_BUDGETS_PER_ACCOUNT {
            return Err(format!(
                "budgets: {} are more than {MAX_BUDGETS_PER_ACCOUNT} per account",
                self.budgets.len()
            ));
        }
        for (id, b) in &self.budgets {
            if &b.id != id {
                return Err(format!("budgets.{id}: its id is {:?}", b.id));
            }
            if b.account != account {
                return Err(format!("budgets.{id}: belongs to {:?}", b.account));
            }
            if let BudgetScope::Tag { .. } = b.scope {
                return Err(format!(
                    "budgets.{id}.scope: budgets on a project tag are not evaluated by this version; use an account or an organization node"
                ));
            }
            b.validate().map_err(|e| format!("budgets.{id}.{e}"))?;
        }
        if let Some(a) = &self.balance {
            a.validate().map_err(|e| format!("balance.{e}"))?;
        }
        if let Some(r) = &self.reminders {
            r.validate().map_err(|e| format!("reminders.{e}"))?;
        }
        if let Some(p) = &self.arrears {
            p.validate().map_err(|e| format!("arrears.{e}"))?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use billing_core::notify::BudgetAction;
    use rust_decimal::Decimal;

    fn budget(id: &str, account: &str, thresholds: &[i64]) -> Budget {
        Budget {
            id: id.into(),
            account: account.into(),
            scope: BudgetScope::Account(account.into()),
            amount: Decimal::from(1000),
            thresholds: thresholds.iter().map(|&t| Decimal::from(t)).collect(),
            forecast: false,
            action: BudgetAction::Notify,
        }
    }

    #[test]
    fn each_error_names_the_field() {
        let mut s = NotifySettings::default();
        s.budgets
            .insert("b1".into(), budget("b1", "acme", &[50, 80, 100]));
        assert_eq!(s.validate("acme"), Ok(()));
        s.budgets
            .insert("b2".into(), budget("b2", "acme", &[50, 1001]));
        let e = s.validate("acme").unwrap_err();
        assert!(e.starts_with("budgets.b2.thresholds[1]"), "{e}");
        s.budgets.remove("b2");
        let mut tag = budget("t", "acme", &[100]);
        tag.scope = BudgetScope::Tag {
            tag: "project".into(),
            value: "x".into(),
        };
        s.budgets.insert("t".into(), tag);
        assert!(
            s.validate("acme")
                .unwrap_err()
                .starts_with("budgets.t.scope")
        );
        s.budgets.remove("t");
        assert!(s.validate("other").unwrap_err().contains("belongs to"));
    }

    #[test]
    fn settings_round_trip_and_refuse_unknown_fields() {
        let mut s = NotifySettings::default();
        s.budgets.insert("b1".into(), budget("b1", "acme", &[100]));
        s.arrears = Some(ArrearsPolicy::default());
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(parse(&text).unwrap(), s);
        assert!(serde_json::from_str::<NotifySettings>(r#"{"budget": {}}"#).is_err());
    }
}
