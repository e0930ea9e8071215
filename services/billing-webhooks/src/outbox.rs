//! The persistence the delivery worker needs: a small trait over the outbox tables (see
//! `sql/postgres.sql` and `sql/sqlite.sql`), implemented in memory by [`crate::memory`].
//!
//! The worker decides (schedule, health, signatures); the outbox only stores. Writing the
//! notifications and fanning them out to the endpoints' deliveries belongs to the core's
//! transaction, not to this trait.
//!
//! One worker per outbox: `due` hands out each endpoint's head while nothing else attempts it.
//! With several engines, the SQL implementation hands a head to one of them (a lease column or
//! `for update skip locked` held through the attempt); `record`'s compare-and-set on the
//! attempt count keeps a stale worker from overwriting a newer outcome either way.

use std::future::Future;

use crate::filter::EventFilter;
use crate::schedule::{EndpointHealth, NextStep};
use crate::sign::{MessageId, SigningSecrets};

/// An endpoint's id (`ep_...`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EndpointId(pub String);

/// A notification's position in the outbox: increasing in the order the core wrote them. The
/// order of delivery per endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NotificationId(pub i64);

/// A webhook endpoint as the worker needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: EndpointId,
    /// `None` for a platform endpoint (a rental backend), which receives every account's events.
    pub account: Option<String>,
    /// Checked when it was registered ([`crate::target::validate_endpoint_url`]); checked again
    /// at every attempt.
    pub url: String,
    pub secrets: SigningSecrets,
    pub filter: EventFilter,
}

/// A notification: what is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub notification: NotificationId,
    /// `webhook-id`: the same for every attempt and every endpoint.
    pub id: MessageId,
    pub account: Option<String>,
    /// The account's sequence number of the notification.
    pub seq: i64,
    pub event_type: String,
    /// The JSON body exactly as sent and signed.
    pub body: String,
    pub created_at_ms: i64,
}

/// An endpoint's head delivery whose attempt is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    pub endpoint: Endpoint,
    /// The endpoint's first failed attempt since its last success (column `failing_since`).
    pub failing_since_ms: Option<i64>,
    pub message: Message,
    /// Attempts of this delivery so far, over its whole life (numbers the attempt log).
    pub attempts_total: u32,
    /// Attempts since it was queued, resent or its endpoint re-enabled (the schedule's step).
    pub round_attempts: u32,
}

/// What an attempt ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The endpoint answered with this HTTP status (2xx: delivered).
    Status(u16),
    /// No answer: refused address, connection error, timeout (the error's text).
    Error(String),
}

/// One row of the delivery log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptLog {
    pub endpoint: EndpointId,
    pub notification: NotificationId,
    /// 1-based, over the delivery's whole life.
    pub attempt: u32,
    pub at_ms: i64,
    pub outcome: AttemptOutcome,
    pub latency_ms: u64,
}

/// An attempt and the states it leads to, written atomically by [`Outbox::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub log: AttemptLog,
    /// The delivery's `attempts_total` before this attempt: the row is updated only if it still
    /// has it (compare-and-set).
    pub expected_attempts_total: u32,
    /// The delivery's `round_attempts` after this attempt.
    pub round_attempts: u32,
    /// `Delivered`, `Failed`, or `Pending` with `next_attempt_at` (`RetryAt`).
    pub next: NextStep,
    /// The endpoint's `failing_since`, `enabled` and `disabled_at` after this attempt.
    pub endpoint: EndpointHealth,
}

/// Whether [`Outbox::record`] applied the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Applied,
    /// Another attempt was recorded first; nothing was written.
    Stale,
}

/// A customer's (or operator's) request to send again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requeue {
    /// A delivered or failed delivery goes back to pending, due at `at_ms`, with a fresh
    /// schedule. It keeps its place in the endpoint's order (its notification id).
    Resend {
        endpoint: EndpointId,
        notification: NotificationId,
        at_ms: i64,
    },
    /// A disabled endpoint is enabled, its failure forgotten, and its pending deliveries due at
    /// `at_ms` with a fresh schedule, delivered in order from the oldest.
    Reenable { endpoint: EndpointId, at_ms: i64 },
}

/// Why the outbox could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("no webhook endpoint {0:?}")]
    UnknownEndpoint(EndpointId),
    #[error("no delivery of notification {notification:?} to endpoint {endpoint:?}")]
    UnknownDelivery {
        endpoint: EndpointId,
        notification: NotificationId,
    },
    #[error("the outbox's {operation} failed")]
    Storage {
        operation: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The outbox tables, as the worker uses them.
pub trait Outbox: Send + Sync {
    /// For each enabled endpoint, its head (the pending delivery with the lowest notification
    /// id) if its `next_attempt_at` is at or before `now_ms`; at most `limit`, oldest first.
    /// Never two deliveries of one endpoint: that is what keeps the order per endpoint.
    fn due(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<DueDelivery>, OutboxError>> + Send;

    /// In one transaction: appends `record.log` to the attempt log, updates the delivery (if
    /// its `attempts_total` is still `expected_attempts_total`) and its endpoint's health.
    fn record(
        &self,
        record: AttemptRecord,
    ) -> impl Future<Output = Result<Recorded, OutboxError>> + Send;

    /// Applies a resend or a re-enabling; `Ok(false)` when there was nothing to change (a
    /// pending delivery, an enabled endpoint).
    fn requeue(&self, requeue: Requeue) -> impl Future<Output = Result<bool, OutboxError>> + Send;
}
