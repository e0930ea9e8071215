//! Webhook endpoints: a customer's (an account's) or the platform's (no account: every
//! account's notifications, for rental backends). Checked when written: the URL with
//! `billing_webhooks::target` against the operator's [`AddressPolicy`], the event types with
//! the core's names ([`NoticeKind::parse`]). The secret (`whsec_...`) is returned once, when
//! the endpoint is made or its secret rotated; the previous secret keeps signing for
//! [`ROTATION_OVERLAP_MS`].

use crate::conn::db::DbRow;
use crate::conn::error::StoreError;
use crate::conn::handles::WebhookHandle;
use crate::notify::publish::{Measured, Outlet, Published, publish};
use billing_core::notify::{Notice, NoticeKind};
use billing_webhooks::filter::EventFilter;
use billing_webhooks::outbox::{EndpointId, NotificationId, OutboxError, Requeue};
use billing_webhooks::sign::Secret;
use billing_webhooks::target::{AddressPolicy, validate_endpoint_url};
use rust_decimal::Decimal;
use serde::Serialize;

/// How long a rotated-out secret keeps signing: deliveries carry both signatures meanwhile.
pub const ROTATION_OVERLAP_MS: i64 = 24 * 3_600_000;
/// The longest description an endpoint takes, in bytes.
pub const DESCRIPTION_BYTES_MAX: usize = 512;
/// Most live endpoints one owner (an account, or the platform) has.
pub const ENDPOINTS_PER_OWNER_MAX: usize = 50;
/// Most deliveries one page of the delivery log holds.
pub const DELIVERY_LOG_PAGE_MAX: i64 = 1000;

/// Why a webhook request failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// Bad input: the message names the field (`url`, `event_types`, `description`).
    #[error("{0}")]
    Invalid(String),
    #[error("no webhook endpoint {0:?}")]
    UnknownEndpoint(String),
    #[error("no delivery of notification {notification} to webhook endpoint {endpoint:?}")]
    UnknownDelivery { endpoint: String, notification: i64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for WebhookError {
    fn from(e: sqlx::Error) -> Self {
        WebhookError::Store(e.into())
    }
}

impl From<OutboxError> for WebhookError {
    fn from(e: OutboxError) -> Self {
        match e {
            OutboxError::UnknownEndpoint(id) => WebhookError::UnknownEndpoint(id.0),
            OutboxError::UnknownDelivery {
                endpoint,
                notification,
            } => WebhookError::UnknownDelivery {
                endpoint: endpoint.0,
                notification: notification.0,
            },
            other => WebhookError::Store(StoreError::Corrupt(format!("webhook outbox: {other}"))),
        }
    }
}

type Result<T, E = WebhookError> = std::result::Result<T, E>;

/// An endpoint as the API shows it (never its secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebhookEndpoint {
    pub id: String,
    /// `None`: a platform endpoint (every account's notifications).
    pub account: Option<String>,
    pub url: String,
    pub description: String,
    /// The types it receives; empty: every type.
    pub event_types: Vec<String>,
    /// False once 5 days of failed attempts disabled it (`POST .../enable` turns it back on).
    pub enabled: bool,
    pub disabled_at_ms: Option<i64>,
    /// The first failed attempt since its last success.
    pub failing_since_ms: Option<i64>,
    /// During a rotation: when the previous secret stops signing.
    pub previous_secret_expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
}

/// An endpoint just made, or whose secret was just rotated, with its secret: shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WithSecret {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// `whsec_<base64>`: verify the `webhook-signature` header with it.
    pub secret: String,
}

/// A new endpoint, as asked.
#[derive(Debug, Clone, Default)]
pub struct NewEndpoint {
    pub url: String,
    pub description: Option<String>,
    /// Absent or empty: every type.
    pub event_types: Option<Vec<String>>,
}

/// A change of an endpoint: what is given changes, the rest stays.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    pub url: Option<String>,
    pub description: Option<String>,
    pub event_types: Option<Vec<String>>,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeliveryAttempt {
    /// 1-based, over the delivery's whole life (resends included).
    pub attempt: i64,
    pub at_ms: i64,
    /// The HTTP status the endpoint answered, when it answered.
    pub status_code: Option<i64>,
    /// Otherwise what went wrong (refused address, connection error, timeout).
    pub error: Option<String>,
    pub latency_ms: i64,
}

/// A notification's delivery to an endpoint, with its attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// The notification's outbox id (`webhook-id` is `msg_<id>`).
    pub notification: i64,
    /// The account's sequence number of the notification.
    pub seq: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// When pending: the next attempt (ms).
    pub next_attempt_at_ms: Option<i64>,
    pub attempts_total: i64,
    pub attempts: Vec<DeliveryAttempt>,
}

fn owner_key(owner: Option<&str>) -> &str {
    owner.unwrap_or("")
}

fn endpoint_of(r: &DbRow) -> Result<WebhookEndpoint> {
    let types: String = r.get("event_types");
    let event_types: Vec<String> = serde_json::from_str(&types).map_err(|e| {
        StoreError::Corrupt(format!(
            "webhook_endpoints.event_types holds {types:?}: {e}"
        ))
    })?;
    let disabled_at_ms: Option<i64> = r.get("disabled_at_ms");
    Ok(WebhookEndpoint {
        id: r.get("id"),
        account: r.get("account"),
        url: r.get("url"),
        description: r.get("description"),
        event_types,
        enabled: disabled_at_ms.is_none(),
        disabled_at_ms,
        failing_since_ms: r.get("failing_since_ms"),
        previous_secret_expires_at_ms: r.get("previous_secret_expires_at_ms"),
        created_at_ms: r.get("created_at_ms"),
    })
}

/// The URL checked against the policy (its host resolved, every address allowed).
async fn check_url(url: &str, policy: &AddressPolicy) -> Result<String> {
    validate_endpoint_url(url, policy)
        .await
        .map_err(|e| WebhookError::Invalid(format!("url: {e}")))?;
    Ok(url.to_string())
}

/// The event types checked against the core's names, as stored (a JSON array).
fn check_types(types: &[String]) -> Result<String> {
    let known = |t: &str| {
        NoticeKind::parse(t).map(|_| ()).map_err(|_| {
            let names: Vec<&str> = NoticeKind::ALL.iter().map(|k| k.as_str()).collect();
            format!("the known types are {}", names.join(", "))
        })
    };
    EventFilter::new(types, &known)
        .map_err(|e| WebhookError::Invalid(format!("event_types: {e}")))?;
    serde_json::to_string(types).map_err(|e| WebhookError::Invalid(format!("event_types: {e}")))
}

fn check_description(d: &str) -> Result<()> {
    if d.len() > DESCRIPTION_BYTES_MAX {
        return Err(WebhookError::Invalid(format!(
            "description: {} bytes, at most {DESCRIPTION_BYTES_MAX} are allowed",
            d.len()
        )));
    }
    Ok(())
}

fn new_secret() -> Result<String> {
    Secret::generate()
        .map(|s| s.expose_whsec())
        .map_err(|e| WebhookError::Store(StoreError::Corrupt(format!("webhook secret: {e}"))))
}

fn new_id() -> Result<String> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).map_err(|e| {
        WebhookError::Store(StoreError::Corrupt(format!("random endpoint id: {e}")))
    })?;
    Ok(format!("ep_{}", hex::encode(bytes)))
}

impl WebhookHandle<'_> {
    /// Registers an endpoint of `owner` (an account, `None` for the platform) at `now_ms`.
    /// The caller checked that the account exists.
    pub async fn create(
        &self,
        owner: Option<&str>,
        new: NewEndpoint,
        policy: &AddressPolicy,
        now_ms: i64,
    ) -> Result<WithSecret> {
        let url = check_url(&new.url, policy).await?;
        let types = check_types(new.event_types.as_deref().unwrap_or_default())?;
        let description = new.description.unwrap_or_default();
        check_description(&description)?;
        if self.list(owner).await?.len() >= ENDPOINTS_PER_OWNER_MAX {
            return Err(WebhookError::Invalid(format!(
                "url: at most {ENDPOINTS_PER_OWNER_MAX} webhook endpoints per account; delete one first"
            )));
        }
        let id = new_id()?;
        let secret = new_secret()?;
        {
            let _w = self.writer.lock().await;
            let mut tx = self.begin_write().await?;
            crate::conn::db::query(include_str!(
                "../../queries/shared/insert_webhook_endpoint.sql"
            ))
            .bind(id.as_str())
            .bind(owner.map(str::to_string))
            .bind(url.as_str())
            .bind(description.as_str())
            .bind(secret.as_str())
            .bind(types.as_str())
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        }
        tracing::info!(endpoint = %id, account = owner.unwrap_or("(platform)"), "webhook endpoint created");
        Ok(WithSecret {
            endpoint: self.get(owner, &id).await?,
            secret,
        })
    }

    /// The live endpoints of `owner` (an account, `None`: the platform's), oldest first.
    pub async fn list(&self, owner: Option<&str>) -> Result<Vec<WebhookEndpoint>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_webhook_endpoints.sql"
        ))
        .bind(owner_key(owner))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(endpoint_of).collect()
    }

    /// Live endpoint `id` of `owner`; [`WebhookError::UnknownEndpoint`] when it is another
    /// owner's, deleted or unknown.
    pub async fn get(&self, owner: Option<&str>, id: &str) -> Result<WebhookEndpoint> {
        let row = crate::conn::db::query(include_str!(
            "../../queries/shared/select_webhook_endpoint.sql"
        ))
        .bind(id)
        .bind(owner_key(owner))
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(r) => endpoint_of(&r),
            None => Err(WebhookError::UnknownEndpoint(id.to_string())),
        }
    }

    /// Changes what `change` gives of endpoint `id` of `owner`.
    pub async fn update(
        &self,
        owner: Option<&str>,
        id: &str,
        change: EndpointChange,
        policy: &AddressPolicy,
    ) -> Result<WebhookEndpoint> {
        self.get(owner, id).await?;
        let url = match &change.url {
            Some(u) => Some(check_url(u, policy).await?),
            None => None,
        };
        let types = match &change.event_types {
            Some(t) => Some(check_types(t)?),
            None => None,
        };
        if let Some(d) = &change.description {
            check_description(d)?;
        }
        let changed = {
            let _w = self.writer.lock().await;
            let mut tx = self.begin_write().await?;
            let n = crate::conn::db::query(include_str!(
                "../../queries/shared/update_webhook_endpoint.sql"
            ))
            .bind(id)
            .bind(owner_key(owner))
            .bind(url)
            .bind(types)
            .bind(change.description)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            n
        };
        if changed == 0 {
            return Err(WebhookError::UnknownEndpoint(id.to_string()));
        }
        self.get(owner, id).await
    }

    /// Deletes endpoint `id` of `owner` at `now_ms` (soft: its log stays; its pending
    /// deliveries are never attempted again).
    pub async fn delete(&self, owner: Option<&str>, id: &str, now_ms: i64) -> Result<()> {
        let changed = {
            let _w = self.writer.lock().await;
            let mut tx = self.begin_write().await?;
            let n = crate::conn::db::query(include_str!(
                "../../queries/shared/delete_webhook_endpoint.sql"
            ))
            .bind(id)
            .bind(owner_key(owner))
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            n
        };
        if changed == 0 {
            return Err(WebhookError::UnknownEndpoint(id.to_string()));
        }
        tracing::info!(endpoint = %id, "webhook endpoint deleted");
        Ok(())
    }

    /// A new secret for endpoint `id` of `owner`, returned once; the previous one keeps
    /// signing for [`ROTATION_OVERLAP_MS`] (deliveries carry both signatures meanwhile).
    pub async fn rotate(&self, owner: Option<&str>, id: &str, now_ms: i64) -> Result<WithSecret> {
        let secret = new_secret()?;
        let changed = {
            let _w = self.writer.lock().await;
            let mut tx = self.begin_write().await?;
            let n = crate::conn::db::query(include_str!(
                "../../queries/shared/rotate_webhook_secret.sql"
            ))
            .bind(id)
            .bind(owner_key(owner))
            .bind(secret.as_str())
            .bind(now_ms.saturating_add(ROTATION_OVERLAP_MS))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            n
        };
        if changed == 0 {
            return Err(WebhookError::UnknownEndpoint(id.to_string()));
        }
        tracing::info!(endpoint = %id, "webhook endpoint secret rotated");
        Ok(WithSecret {
            endpoint: self.get(owner, id).await?,
            secret,
        })
    }

    /// Enables disabled endpoint `id` of `owner` (`Requeue::Reenable`): its pending
    /// deliveries due at `now_ms`, in order, with fresh schedules. `false`: it was enabled.
    pub async fn enable(&self, owner: Option<&str>, id: &str, now_ms: i64) -> Result<bool> {
        self.get(owner, id).await?;
        let requeue = Requeue::Reenable {
            endpoint: EndpointId(id.to_string()),
            at_ms: now_ms,
        };
        Ok(crate::webhooks::outbox::requeue(self, requeue).await?)
    }

    /// Sends notification `notification` to endpoint `id` of `owner` again
    /// (`Requeue::Resend`), due at `now_ms`; `false`: it is still pending.
    pub async fn resend(
        &self,
        owner: Option<&str>,
        id: &str,
        notification: i64,
        now_ms: i64,
    ) -> Result<bool> {
        self.get(owner, id).await?;
        let requeue = Requeue::Resend {
            endpoint: EndpointId(id.to_string()),
            notification: NotificationId(notification),
            at_ms: now_ms,
        };
        Ok(crate::webhooks::outbox::requeue(self, requeue).await?)
    }

    /// The delivery log of endpoint `id` of `owner`: its deliveries, newest first, at most
    /// `limit`, each with its attempts in order.
    pub async fn deliveries(
        &self,
        owner: Option<&str>,
        id: &str,
        limit: i64,
    ) -> Result<Vec<Delivery>> {
        self.get(owner, id).await?;
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_endpoint_deliveries.sql"
        ))
        .bind(id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<Delivery> = rows
            .iter()
            .map(|r| {
                let status: String = r.get("status");
                let next: i64 = r.get("next_attempt_at_ms");
                Delivery {
                    notification: r.get("notification"),
                    seq: r.get("seq"),
                    event_type: r.get("type"),
                    next_attempt_at_ms: (status == "pending").then_some(next),
                    status,
                    attempts_total: r.get("attempts_total"),
                    attempts: Vec::new(),
                }
            })
            .collect();
        let Some(oldest) = out.last().map(|d| d.notification) else {
            return Ok(out);
        };
        let attempts = crate::conn::db::query(include_str!(
            "../../queries/shared/select_endpoint_attempts.sql"
        ))
        .bind(id)
        .bind(oldest)
        .fetch_all(&self.pool)
        .await?;
        for a in &attempts {
            let notification: i64 = a.get("notification");
            if let Some(d) = out.iter_mut().find(|d| d.notification == notification) {
                d.attempts.push(DeliveryAttempt {
                    attempt: a.get("attempt"),
                    at_ms: a.get("at_ms"),
                    status_code: a.get("status_code"),
                    error: a.get("error"),
                    latency_ms: a.get("latency_ms"),
                });
            }
        }
        Ok(out)
    }

    /// Publishes a `test` notification of `account` (the console's "send test event") at
    /// `now_ms`, keyed by `nonce`: it goes to every endpoint of the account (and the
    /// platform's) that takes `test`. `None` when `nonce` was used already.
    pub async fn send_test(
        &self,
        account: &str,
        nonce: &str,
        now_ms: i64,
    ) -> Result<Option<Published>> {
        let notice = Notice::test(account, now_ms.div_euclid(1000), nonce);
        let position = serde_json::Value::Array(Vec::new());
        let out = Outlet {
            backend: self.backend,
            topics: self.topics(),
            position: &position,
            now_ms,
        };
        let measured = Measured {
            label: "",
            used: Decimal::ZERO,
            limit: Decimal::ZERO,
        };
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let published = publish(&mut tx, &out, &notice, &measured).await?;
        tx.commit().await?;
        Ok(published)
    }
}
