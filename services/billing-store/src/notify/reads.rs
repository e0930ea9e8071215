//! What the API shows of notifications: an account's settings with the states of its rules
//! (the arrears step due next, and when), and the notifications written.

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::NotifyHandle;
use crate::notify::settings::NotifySettings;
use serde::Serialize;

/// One remembered state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotifyState {
    pub subject: String,
    pub state: serde_json::Value,
    /// What it refuses to authorize, when it blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<serde_json::Value>,
    pub updated_at_ms: i64,
}

/// The arrears sequence of an account: where it is and what happens next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArrearsView {
    pub phase: String,
    pub episode: u32,
    /// The next step (`stop`, `release`) and when it is due, Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<(String, i64)>,
}

/// An account's notification settings and states.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotifyView {
    pub account: String,
    pub settings: NotifySettings,
    pub states: Vec<NotifyState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrears: Option<ArrearsView>,
}

/// A notification as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredNotification {
    pub id: i64,
    pub account: String,
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub key: String,
    pub at_s: i64,
    /// The body delivered (webhooks and the Kafka topic), parsed.
    pub body: serde_json::Value,
    pub created_at_ms: i64,
}

fn json(text: &str, what: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

impl NotifyHandle<'_> {
    /// An account's settings, the states of its rules and its arrears sequence.
    pub async fn view(&self, account: &str) -> Result<NotifyView> {
        let mut conn = self.pool.acquire().await?;
        let settings = crate::notify::settings::settings_of(&mut conn, account).await?;
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_notify_states.sql"
        ))
        .bind(account)
        .fetch_all(&mut *conn)
        .await?;
        let mut states = Vec::with_capacity(rows.len());
        let mut arrears = None;
        for r in rows {
            let subject: String = r.get("subject");
            let body: String = r.get("body");
            if subject == "arrears" {
                let st: billing_core::notify::ArrearsState = serde_json::from_str(&body)
                    .map_err(|e| StoreError::Corrupt(format!("notify_states arrears: {e}")))?;
                let policy = settings.arrears.unwrap_or_default();
                arrears = Some(ArrearsView {
                    phase: st.phase.as_str().to_string(),
                    episode: st.episode,
                    next: billing_core::notify::next_due(&st, &policy)
                        .map(|(at, step)| (step.as_str().to_string(), at)),
                });
            }
            let block: Option<String> = r.get("block");
            states.push(NotifyState {
                state: json(&body, "notify_states.body")?,
                block: block.map(|b| json(&b, "notify_states.block")).transpose()?,
                subject,
                updated_at_ms: r.get("updated_at_ms"),
            });
        }
        Ok(NotifyView {
            account: account.to_string(),
            settings,
            states,
            arrears,
        })
    }

    /// Notifications after `after` (an account's: its `seq`; every account's: the outbox id),
    /// oldest first, at most `limit`.
    pub async fn notifications(
        &self,
        account: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredNotification>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_notifications.sql"
        ))
        .bind(account.unwrap_or(""))
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(StoredNotification {
                    id: r.get("id"),
                    account: r.get("account"),
                    seq: r.get("seq"),
                    kind: r.get("type"),
                    key: r.get("key"),
                    at_s: r.get("at_s"),
                    body: json(&r.get::<String, _>("payload"), "notifications.payload")?,
                    created_at_ms: r.get("created_at_ms"),
                })
            })
            .collect()
    }
}
