//! [`SqlOutbox`]: `billing_webhooks::outbox::Outbox` over the tables of migration 0027, as
//! `services/billing-webhooks/sql/postgres.sql` describes it, on SQLite and PostgreSQL.
//!
//! Several engines: `due` claims each head it returns with a compare-and-set of its
//! `next_attempt_at_ms` (moved to the end of a [`LEASE_MS`] lease, which is longer than an
//! attempt can take), so no other worker sees it due while it is attempted; the record then
//! sets the next attempt (or delivers or fails it). A worker that dies mid-attempt leaves
//! the head due again at the lease's end. `record` applies only if the delivery still has the
//! attempt count the worker saw (a second compare-and-set).

use crate::conn::db::DbRow;
use crate::conn::error::StoreError;
use crate::conn::store::Store;
use billing_webhooks::filter::EventFilter;
use billing_webhooks::memory::message_id;
use billing_webhooks::outbox::{
    AttemptOutcome, AttemptRecord, DueDelivery, Endpoint, EndpointId, Message, NotificationId,
    Outbox, OutboxError, Recorded, Requeue,
};
use billing_webhooks::schedule::{EndpointHealth, NextStep};
use billing_webhooks::sign::{PreviousSecret, Secret, SigningSecrets};
use std::sync::Arc;

/// How long a head handed to a worker is hidden from the others: longer than an attempt can
/// last (`billing_webhooks::limits::ATTEMPT_TIMEOUT_MS`, 15 s) with its record.
pub const LEASE_MS: i64 = 60_000;

/// The outbox of the store's webhook tables.
#[derive(Clone)]
pub struct SqlOutbox {
    store: Arc<Store>,
}

impl SqlOutbox {
    pub fn new(store: Arc<Store>) -> SqlOutbox {
        SqlOutbox { store }
    }
}

fn storage(operation: &'static str) -> impl FnOnce(StoreError) -> OutboxError {
    move |e| OutboxError::Storage {
        operation,
        source: Box::new(e),
    }
}

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt(what)
}

fn count(v: i64, column: &str) -> Result<u32, StoreError> {
    u32::try_from(v).map_err(|_| corrupt(format!("deliveries.{column} holds {v}")))
}

/// A due head as read, and the values its claim compares.
struct Candidate {
    due: DueDelivery,
    next_attempt_at_ms: i64,
}

fn candidate(r: &DbRow) -> Result<Candidate, StoreError> {
    let endpoint: String = r.get("endpoint");
    let secret_text: String = r.get("secret");
    let secret = Secret::parse(&secret_text)
        .map_err(|e| corrupt(format!("webhook_endpoints.secret of {endpoint}: {e}")))?;
    let mut secrets = SigningSecrets::new(secret);
    let previous: Option<String> = r.get("previous_secret");
    let expires: Option<i64> = r.get("previous_secret_expires_at_ms");
    if let (Some(p), Some(expires_at_ms)) = (previous, expires) {
        let secret = Secret::parse(&p).map_err(|e| {
            corrupt(format!(
                "webhook_endpoints.previous_secret of {endpoint}: {e}"
            ))
        })?;
        secrets.previous = Some(PreviousSecret {
            secret,
            expires_at_ms,
        });
    }
    let types_text: String = r.get("event_types");
    let types: Vec<String> = serde_json::from_str(&types_text)
        .map_err(|e| corrupt(format!("webhook_endpoints.event_types of {endpoint}: {e}")))?;
    let filter = EventFilter::new(&types, &|_| Ok(()))
        .map_err(|e| corrupt(format!("webhook_endpoints.event_types of {endpoint}: {e}")))?;
    let notification = NotificationId(r.get("notification"));
    Ok(Candidate {
        next_attempt_at_ms: r.get("next_attempt_at_ms"),
        due: DueDelivery {
            endpoint: Endpoint {
                id: EndpointId(endpoint),
                account: r.get("endpoint_account"),
                url: r.get("url"),
                secrets,
                filter,
            },
            failing_since_ms: r.get("failing_since_ms"),
            message: Message {
                notification,
                id: message_id(notification),
                account: Some(r.get("account")),
                seq: r.get("seq"),
                event_type: r.get("type"),
                body: r.get("payload"),
                created_at_ms: r.get("created_at_ms"),
            },
            attempts_total: count(r.get("attempts_total"), "attempts_total")?,
            round_attempts: count(r.get("round_attempts"), "round_attempts")?,
        },
    })
}

impl SqlOutbox {
    async fn due_heads(&self, now_ms: i64, limit: usize) -> Result<Vec<DueDelivery>, StoreError> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_due_deliveries.sql"
        ))
        .bind(now_ms)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.store.pool)
        .await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let candidates = rows.iter().map(candidate).collect::<Result<Vec<_>, _>>()?;
        let mut claimed = Vec::with_capacity(candidates.len());
        let _w = self.store.writer.lock().await;
        let mut tx = self.store.begin_write().await?;
        for c in candidates {
            let n = crate::conn::db::query(include_str!("../../queries/shared/claim_delivery.sql"))
                .bind(c.due.endpoint.id.0.as_str())
                .bind(c.due.message.notification.0)
                .bind(now_ms.saturating_add(LEASE_MS))
                .bind(c.next_attempt_at_ms)
                .bind(i64::from(c.due.attempts_total))
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n == 1 {
                claimed.push(c.due);
            }
        }
        tx.commit().await?;
        Ok(claimed)
    }

    async fn write_record(&self, record: AttemptRecord) -> Result<Recorded, StoreError> {
        let (status, retry_at) = match record.next {
            NextStep::Delivered => ("delivered", None),
            NextStep::Failed => ("failed", None),
            NextStep::RetryAt { at_ms } => ("pending", Some(at_ms)),
        };
        let (failing_since, disabled_at) = match record.endpoint {
            EndpointHealth::Healthy => (None, None),
            EndpointHealth::Failing { since_ms } => (Some(since_ms), None),
            EndpointHealth::Disabled { since_ms, at_ms } => (Some(since_ms), Some(at_ms)),
        };
        let (code, error) = match &record.log.outcome {
            AttemptOutcome::Status(c) => (Some(i64::from(*c)), None),
            AttemptOutcome::Error(e) => (None, Some(e.clone())),
        };
        let endpoint = record.log.endpoint.0.as_str();
        let notification = record.log.notification.0;
        let _w = self.store.writer.lock().await;
        let mut tx = self.store.begin_write().await?;
        let n = crate::conn::db::query(include_str!("../../queries/shared/record_delivery.sql"))
            .bind(i64::from(record.log.attempt))
            .bind(i64::from(record.round_attempts))
            .bind(status)
            .bind(retry_at)
            .bind(endpoint)
            .bind(notification)
            .bind(i64::from(record.expected_attempts_total))
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if n == 0 {
            tx.rollback().await?;
            return Ok(Recorded::Stale);
        }
        crate::conn::db::query(include_str!(
            "../../queries/shared/insert_delivery_attempt.sql"
        ))
        .bind(endpoint)
        .bind(notification)
        .bind(i64::from(record.log.attempt))
        .bind(record.log.at_ms)
        .bind(code)
        .bind(error)
        .bind(i64::try_from(record.log.latency_ms).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        crate::conn::db::query(include_str!(
            "../../queries/shared/update_webhook_endpoint_health.sql"
        ))
        .bind(endpoint)
        .bind(failing_since)
        .bind(disabled_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        metrics::counter!("gpubill_webhook_attempts_total", "outcome" => status).increment(1);
        Ok(Recorded::Applied)
    }
}

/// Applies a resend or a re-enabling (the API's and the worker's); `Ok(false)` when there was
/// nothing to change.
pub(crate) async fn requeue(store: &Store, requeue: Requeue) -> Result<bool, OutboxError> {
    let run = async {
        let _w = store.writer.lock().await;
        let mut tx = store.begin_write().await?;
        let outcome = match &requeue {
            Requeue::Resend {
                endpoint,
                notification,
                at_ms,
            } => {
                let n = crate::conn::db::query(include_str!(
                    "../../queries/shared/resend_delivery.sql"
                ))
                .bind(endpoint.0.as_str())
                .bind(notification.0)
                .bind(*at_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if n == 1 {
                    Ok(true)
                } else {
                    let found = crate::conn::db::query(include_str!(
                        "../../queries/shared/select_delivery_exists.sql"
                    ))
                    .bind(endpoint.0.as_str())
                    .bind(notification.0)
                    .fetch_optional(&mut *tx)
                    .await?;
                    match found {
                        Some(_) => Ok(false),
                        None => Err(OutboxError::UnknownDelivery {
                            endpoint: endpoint.clone(),
                            notification: *notification,
                        }),
                    }
                }
            }
            Requeue::Reenable { endpoint, at_ms } => {
                let n = crate::conn::db::query(include_str!(
                    "../../queries/shared/reenable_webhook_endpoint.sql"
                ))
                .bind(endpoint.0.as_str())
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if n == 1 {
                    crate::conn::db::query(include_str!(
                        "../../queries/shared/reset_pending_deliveries.sql"
                    ))
                    .bind(endpoint.0.as_str())
                    .bind(*at_ms)
                    .execute(&mut *tx)
                    .await?;
                    Ok(true)
                } else {
                    let found = crate::conn::db::query(include_str!(
                        "../../queries/shared/select_webhook_endpoint_any.sql"
                    ))
                    .bind(endpoint.0.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
                    match found {
                        Some(_) => Ok(false),
                        None => Err(OutboxError::UnknownEndpoint(endpoint.clone())),
                    }
                }
            }
        };
        tx.commit().await?;
        if let (Ok(true), Requeue::Reenable { endpoint, .. }) = (&outcome, &requeue) {
            tracing::info!(endpoint = %endpoint.0, "webhook endpoint re-enabled");
        }
        Ok::<_, StoreError>(outcome)
    };
    run.await.map_err(storage("requeue"))?
}

impl Outbox for SqlOutbox {
    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<DueDelivery>, OutboxError> {
        self.due_heads(now_ms, limit).await.map_err(storage("due"))
    }

    async fn record(&self, record: AttemptRecord) -> Result<Recorded, OutboxError> {
        self.write_record(record).await.map_err(storage("record"))
    }

    async fn requeue(&self, requeue: Requeue) -> Result<bool, OutboxError> {
        self::requeue(&self.store, requeue).await
    }
}
