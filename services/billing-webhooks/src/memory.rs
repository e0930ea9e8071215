//! The outbox in memory: for tests, and the reference the SQL implementations follow.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::outbox::{
    AttemptLog, AttemptRecord, DueDelivery, Endpoint, EndpointId, Message, NotificationId, Outbox,
    OutboxError, Recorded, Requeue,
};
use crate::schedule::{DeliveryStatus, EndpointHealth, NextStep};
use crate::sign::{MessageId, Secret};

/// An endpoint's row: what [`Endpoint`] carries plus its health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointRow {
    pub endpoint: Endpoint,
    pub enabled: bool,
    pub disabled_at_ms: Option<i64>,
    pub failing_since_ms: Option<i64>,
    pub created_at_ms: i64,
}

/// A delivery's row (one notification to one endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryRow {
    pub status: DeliveryStatus,
    pub next_attempt_at_ms: i64,
    pub attempts_total: u32,
    pub round_attempts: u32,
}

#[derive(Debug, Default)]
struct State {
    endpoints: BTreeMap<EndpointId, EndpointRow>,
    notifications: BTreeMap<NotificationId, Message>,
    deliveries: BTreeMap<(EndpointId, NotificationId), DeliveryRow>,
    attempts: Vec<AttemptLog>,
    seq_by_account: BTreeMap<Option<String>, i64>,
}

/// The outbox's tables in a mutex.
#[derive(Debug, Default)]
pub struct MemoryOutbox {
    state: Mutex<State>,
}

impl MemoryOutbox {
    /// An empty outbox.
    pub fn new() -> MemoryOutbox {
        MemoryOutbox::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves consistent rows: each change below is
        // made in one statement.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers an enabled endpoint (its URL already validated).
    pub fn add_endpoint(&self, endpoint: Endpoint, now_ms: i64) {
        let row = EndpointRow {
            endpoint,
            enabled: true,
            disabled_at_ms: None,
            failing_since_ms: None,
            created_at_ms: now_ms,
        };
        self.state().endpoints.insert(row.endpoint.id.clone(), row);
    }

    /// Rotates an endpoint's secret: the old one keeps signing for `overlap_ms`.
    pub fn rotate_secret(
        &self,
        endpoint: &EndpointId,
        next: Secret,
        now_ms: i64,
        overlap_ms: i64,
    ) -> Result<(), OutboxError> {
        let mut state = self.state();
        let row = state
            .endpoints
            .get_mut(endpoint)
            .ok_or_else(|| OutboxError::UnknownEndpoint(endpoint.clone()))?;
        row.endpoint.secrets.rotate(next, now_ms, overlap_ms);
        Ok(())
    }

    /// Writes a notification and queues a delivery to every endpoint of its account (and every
    /// platform endpoint) whose filter takes its type, disabled ones included: re-enabling
    /// resumes them in order. What the core's transaction does in SQL.
    pub fn publish(
        &self,
        account: Option<&str>,
        event_type: &str,
        body: &str,
        now_ms: i64,
    ) -> NotificationId {
        let mut state = self.state();
        let notification =
            NotificationId(i64::try_from(state.notifications.len()).unwrap_or(i64::MAX) + 1);
        let seq = state
            .seq_by_account
            .entry(account.map(str::to_owned))
            .or_insert(0);
        *seq += 1;
        let message = Message {
            notification,
            id: message_id(notification),
            account: account.map(str::to_owned),
            seq: *seq,
            event_type: event_type.to_owned(),
            body: body.to_owned(),
            created_at_ms: now_ms,
        };
        let targets: Vec<EndpointId> = state
            .endpoints
            .values()
            .filter(|row| row.endpoint.account.is_none() || row.endpoint.account == message.account)
            .filter(|row| row.endpoint.filter.matches(event_type))
            .map(|row| row.endpoint.id.clone())
            .collect();
        for endpoint in targets {
            let row = DeliveryRow {
                status: DeliveryStatus::Pending,
                next_attempt_at_ms: now_ms,
                attempts_total: 0,
                round_attempts: 0,
            };
            state.deliveries.insert((endpoint, notification), row);
        }
        state.notifications.insert(notification, message);
        notification
    }

    /// A delivery's row.
    pub fn delivery(
        &self,
        endpoint: &EndpointId,
        notification: NotificationId,
    ) -> Option<DeliveryRow> {
        self.state()
            .deliveries
            .get(&(endpoint.clone(), notification))
            .copied()
    }

    /// An endpoint's row.
    pub fn endpoint(&self, endpoint: &EndpointId) -> Option<EndpointRow> {
        self.state().endpoints.get(endpoint).cloned()
    }

    /// The attempt log, in the order recorded.
    pub fn attempts(&self) -> Vec<AttemptLog> {
        self.state().attempts.clone()
    }
}

/// The `webhook-id` of a notification: `msg_<id>`, never containing a `.`.
pub fn message_id(notification: NotificationId) -> MessageId {
    match MessageId::new(&format!("msg_{}", notification.0)) {
        Ok(id) => id,
        Err(_) => unreachable!("msg_ and digits are a valid message id"),
    }
}

impl State {
    fn head(&self, endpoint: &EndpointId) -> Option<(NotificationId, DeliveryRow)> {
        self.deliveries
            .iter()
            .filter(|((e, _), row)| e == endpoint && row.status == DeliveryStatus::Pending)
            .map(|((_, notification), row)| (*notification, *row))
            .next()
    }

    fn due(&self, now_ms: i64, limit: usize) -> Vec<DueDelivery> {
        let mut due: Vec<DueDelivery> = Vec::new();
        for row in self.endpoints.values().filter(|row| row.enabled) {
            let Some((notification, delivery)) = self.head(&row.endpoint.id) else {
                continue;
            };
            let Some(message) = self.notifications.get(&notification) else {
                continue;
            };
            if delivery.next_attempt_at_ms <= now_ms {
                due.push(DueDelivery {
                    endpoint: row.endpoint.clone(),
                    failing_since_ms: row.failing_since_ms,
                    message: message.clone(),
                    attempts_total: delivery.attempts_total,
                    round_attempts: delivery.round_attempts,
                });
            }
        }
        due.sort_by_key(|d| d.message.notification);
        due.truncate(limit);
        due
    }

    fn record(&mut self, record: AttemptRecord) -> Result<Recorded, OutboxError> {
        let key = (record.log.endpoint.clone(), record.log.notification);
        let delivery =
            self.deliveries
                .get_mut(&key)
                .ok_or_else(|| OutboxError::UnknownDelivery {
                    endpoint: key.0.clone(),
                    notification: key.1,
                })?;
        if delivery.attempts_total != record.expected_attempts_total {
            return Ok(Recorded::Stale);
        }
        delivery.attempts_total = record.log.attempt;
        delivery.round_attempts = record.round_attempts;
        match record.next {
            NextStep::Delivered => delivery.status = DeliveryStatus::Delivered,
            NextStep::Failed => delivery.status = DeliveryStatus::Failed,
            NextStep::RetryAt { at_ms } => delivery.next_attempt_at_ms = at_ms,
        }
        let endpoint = self
            .endpoints
            .get_mut(&key.0)
            .ok_or_else(|| OutboxError::UnknownEndpoint(key.0.clone()))?;
        match record.endpoint {
            EndpointHealth::Healthy => endpoint.failing_since_ms = None,
            EndpointHealth::Failing { since_ms } => endpoint.failing_since_ms = Some(since_ms),
            EndpointHealth::Disabled { since_ms, at_ms } => {
                endpoint.failing_since_ms = Some(since_ms);
                endpoint.enabled = false;
                endpoint.disabled_at_ms = Some(at_ms);
            }
        }
        self.attempts.push(record.log);
        Ok(Recorded::Applied)
    }

    fn requeue(&mut self, requeue: Requeue) -> Result<bool, OutboxError> {
        match requeue {
            Requeue::Resend {
                endpoint,
                notification,
                at_ms,
            } => {
                let key = (endpoint, notification);
                let delivery =
                    self.deliveries
                        .get_mut(&key)
                        .ok_or_else(|| OutboxError::UnknownDelivery {
                            endpoint: key.0.clone(),
                            notification,
                        })?;
                if delivery.status == DeliveryStatus::Pending {
                    return Ok(false);
                }
                *delivery = DeliveryRow {
                    status: DeliveryStatus::Pending,
                    next_attempt_at_ms: at_ms,
                    round_attempts: 0,
                    ..*delivery
                };
                Ok(true)
            }
            Requeue::Reenable { endpoint, at_ms } => {
                let row = self
                    .endpoints
                    .get_mut(&endpoint)
                    .ok_or_else(|| OutboxError::UnknownEndpoint(endpoint.clone()))?;
                if row.enabled {
                    return Ok(false);
                }
                row.enabled = true;
                row.disabled_at_ms = None;
                row.failing_since_ms = None;
                let pending = self
                    .deliveries
                    .iter_mut()
                    .filter(|((e, _), d)| *e == endpoint && d.status == DeliveryStatus::Pending);
                for (_, delivery) in pending {
                    delivery.next_attempt_at_ms = at_ms;
                    delivery.round_attempts = 0;
                }
                Ok(true)
            }
        }
    }
}

impl Outbox for MemoryOutbox {
    async fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<DueDelivery>, OutboxError> {
        Ok(self.state().due(now_ms, limit))
    }

    async fn record(&self, record: AttemptRecord) -> Result<Recorded, OutboxError> {
        self.state().record(record)
    }

    async fn requeue(&self, requeue: Requeue) -> Result<bool, OutboxError> {
        self.state().requeue(requeue)
    }
}
