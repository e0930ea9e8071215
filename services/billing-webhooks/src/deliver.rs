//! The delivery worker: each tick takes every endpoint's due head from the outbox and attempts
//! them concurrently (one task per endpoint), so an endpoint's message n+1 is never attempted
//! before message n is delivered or failed for good, while a slow or failing endpoint holds up
//! no other.
//!
//! An attempt POSTs the message's JSON body with `content-type: application/json` and the
//! Standard Webhooks headers, signed at the attempt's time with every active secret; a 2xx
//! answer within [`limits::ATTEMPT_TIMEOUT_MS`] delivers it. Redirects are not followed (a 3xx
//! fails the attempt), no proxy is used, and every host is resolved through the
//! [`GuardedResolver`].

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::clock::{Clock, Random};
use crate::guard::GuardedResolver;
use crate::limits;
use crate::outbox::{
    AttemptLog, AttemptOutcome, AttemptRecord, DueDelivery, EndpointId, NotificationId, Outbox,
    OutboxError, Recorded, Requeue,
};
use crate::schedule::{self, EndpointHealth, NextStep};
use crate::sign::sign_headers;
use crate::target::{AddressPolicy, check_url};

/// Why the worker could not run.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("building the webhook HTTP client failed")]
    Client(#[source] reqwest::Error),
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    #[error("a delivery task ended abnormally")]
    Task(#[source] tokio::task::JoinError),
}

/// What one tick did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TickReport {
    pub attempted: usize,
    pub delivered: usize,
    /// Messages whose last attempt of the schedule failed in this tick.
    pub failed: usize,
    /// Endpoints disabled in this tick.
    pub disabled: Vec<EndpointId>,
}

struct Shared<O> {
    outbox: Arc<O>,
    clock: Arc<dyn Clock>,
    random: Mutex<Box<dyn Random>>,
    client: reqwest::Client,
    policy: Arc<AddressPolicy>,
}

/// The delivery worker over an outbox.
pub struct Worker<O> {
    shared: Arc<Shared<O>>,
}

impl<O: Outbox + 'static> Worker<O> {
    /// A worker that reaches only addresses `policy` allows; `random` jitters the retries.
    pub fn new(
        outbox: Arc<O>,
        clock: Arc<dyn Clock>,
        random: Box<dyn Random>,
        policy: AddressPolicy,
    ) -> Result<Worker<O>, DeliverError> {
        let policy = Arc::new(policy);
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(Arc::clone(&policy))))
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_millis(limits::CONNECT_TIMEOUT_MS))
            .timeout(Duration::from_millis(limits::ATTEMPT_TIMEOUT_MS))
            .user_agent(concat!("gpubill-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(DeliverError::Client)?;
        let shared = Shared {
            outbox,
            clock,
            random: Mutex::new(random),
            client,
            policy,
        };
        Ok(Worker {
            shared: Arc::new(shared),
        })
    }

    /// Attempts every due head once, concurrently, and records the outcomes.
    pub async fn tick(&self) -> Result<TickReport, DeliverError> {
        let now_ms = self.shared.clock.now_ms();
        let due = self
            .shared
            .outbox
            .due(now_ms, limits::ENDPOINTS_PER_TICK_MAX)
            .await?;
        let mut tasks = JoinSet::new();
        for delivery in due {
            let shared = Arc::clone(&self.shared);
            tasks.spawn(async move { shared.attempt_and_record(delivery).await });
        }
        let mut report = TickReport::default();
        let mut first_error = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(Some(record))) => report.add(&record),
                Ok(Ok(None)) => {}
                Ok(Err(error)) => {
                    first_error.get_or_insert(DeliverError::Outbox(error));
                }
                Err(error) => {
                    first_error.get_or_insert(DeliverError::Task(error));
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    /// Ticks until `shutdown` completes, waiting [`limits::POLL_INTERVAL_MS`] whenever nothing
    /// was due. An outbox error is logged and the tick retried after the interval.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let busy = match self.tick().await {
                Ok(report) => report.attempted > 0,
                Err(error) => {
                    tracing::warn!(error = %error_chain(&error), "webhook delivery tick failed");
                    false
                }
            };
            if busy {
                continue;
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(Duration::from_millis(limits::POLL_INTERVAL_MS)) => {}
            }
        }
    }

    /// Puts a delivered or failed message back for `endpoint`, due now; `Ok(false)` if it is
    /// still pending.
    pub async fn resend(
        &self,
        endpoint: &EndpointId,
        notification: NotificationId,
    ) -> Result<bool, OutboxError> {
        let at_ms = self.shared.clock.now_ms();
        let requeue = Requeue::Resend {
            endpoint: endpoint.clone(),
            notification,
            at_ms,
        };
        self.shared.outbox.requeue(requeue).await
    }

    /// Enables a disabled endpoint: its pending messages are due now, in order; `Ok(false)` if
    /// it was enabled.
    pub async fn reenable(&self, endpoint: &EndpointId) -> Result<bool, OutboxError> {
        let at_ms = self.shared.clock.now_ms();
        let requeue = Requeue::Reenable {
            endpoint: endpoint.clone(),
            at_ms,
        };
        self.shared.outbox.requeue(requeue).await
    }
}

impl TickReport {
    fn add(&mut self, record: &AttemptRecord) {
        self.attempted += 1;
        match record.next {
            NextStep::Delivered => self.delivered += 1,
            NextStep::Failed => self.failed += 1,
            NextStep::RetryAt { .. } => {}
        }
        if matches!(record.endpoint, EndpointHealth::Disabled { .. }) {
            self.disabled.push(record.log.endpoint.clone());
        }
    }
}

impl<O: Outbox> Shared<O> {
    /// One attempt and its record; `None` if another worker recorded first.
    async fn attempt_and_record(
        &self,
        due: DueDelivery,
    ) -> Result<Option<AttemptRecord>, OutboxError> {
        let at_ms = self.clock.now_ms();
        let started = Instant::now();
        let outcome = self.post(&due, at_ms).await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let succeeded =
            matches!(outcome, AttemptOutcome::Status(code) if (200..300).contains(&code));
        let round_attempts = due.round_attempts.saturating_add(1);
        let next = {
            let mut random = self.random.lock().unwrap_or_else(PoisonError::into_inner);
            schedule::next_step(succeeded, round_attempts, at_ms, random.as_mut())
        };
        let record = AttemptRecord {
            log: AttemptLog {
                endpoint: due.endpoint.id.clone(),
                notification: due.message.notification,
                attempt: due.attempts_total.saturating_add(1),
                at_ms,
                outcome,
                latency_ms,
            },
            expected_attempts_total: due.attempts_total,
            round_attempts,
            next,
            endpoint: schedule::endpoint_health(succeeded, due.failing_since_ms, at_ms),
        };
        log_attempt(&record);
        match self.outbox.record(record.clone()).await? {
            Recorded::Applied => Ok(Some(record)),
            Recorded::Stale => {
                tracing::info!(endpoint = %due.endpoint.id.0, notification = due.message.notification.0, "attempt recorded by another worker first");
                Ok(None)
            }
        }
    }

    async fn post(&self, due: &DueDelivery, at_ms: i64) -> AttemptOutcome {
        let url = match check_url(&due.endpoint.url, &self.policy) {
            Ok(url) => url,
            Err(error) => return AttemptOutcome::Error(truncate(error_chain(&error))),
        };
        let body = due.message.body.as_bytes();
        let headers = sign_headers(&due.endpoint.secrets, &due.message.id, at_ms, body);
        let sent = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", headers.id)
            .header("webhook-timestamp", headers.timestamp)
            .header("webhook-signature", headers.signature)
            .body(due.message.body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => AttemptOutcome::Status(response.status().as_u16()),
            Err(error) => AttemptOutcome::Error(truncate(error_chain(&error))),
        }
    }
}

fn log_attempt(record: &AttemptRecord) {
    let log = &record.log;
    let (endpoint, notification, attempt) = (&log.endpoint.0, log.notification.0, log.attempt);
    let outcome = match &log.outcome {
        AttemptOutcome::Status(code) => format!("status {code}"),
        AttemptOutcome::Error(error) => error.clone(),
    };
    match (record.next, record.endpoint) {
        (_, EndpointHealth::Disabled { since_ms, .. }) => {
            tracing::warn!(endpoint, notification, attempt, %outcome, failing_since_ms = since_ms, "webhook endpoint disabled after failing for 5 days")
        }
        (NextStep::Failed, _) => {
            tracing::warn!(endpoint, notification, attempt, %outcome, "webhook message failed: every attempt of the schedule failed")
        }
        (NextStep::RetryAt { at_ms }, _) => {
            tracing::info!(endpoint, notification, attempt, %outcome, retry_at_ms = at_ms, "webhook attempt failed")
        }
        (NextStep::Delivered, _) => {
            tracing::debug!(
                endpoint,
                notification,
                attempt,
                latency_ms = log.latency_ms,
                "webhook delivered"
            )
        }
    }
}

/// An error with its causes, `a: b: c` (reqwest's own `Display` hides the cause).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn truncate(mut text: String) -> String {
    if text.len() > limits::ATTEMPT_ERROR_BYTES_MAX {
        let mut end = limits::ATTEMPT_ERROR_BYTES_MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}
