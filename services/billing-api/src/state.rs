//! The state every handler shares: the store, the tokens, the clock, the sink, the limits.

use crate::answers::Answers as UsageAnswers;
use crate::limits;
use billing_store::{EventSink, Store};
use billing_webhooks::target::AddressPolicy;
use std::sync::Arc;

/// Reads "now" in Unix milliseconds. Injected so tests can set the time.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    })
}

#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    /// SHA-256 hex of the admin token.
    pub admin_token_hash: String,
    /// SHA-256 hex of the ingest token, when one is configured.
    pub ingest_token_hash: Option<String>,
    pub clock: Clock,
    /// In Kafka mode, where `POST /v1/events` hands records off (the usage topic) instead of
    /// folding them itself.
    pub sink: Option<Arc<dyn EventSink>>,
    /// Renders `/metrics` (Prometheus text format) when a recorder is installed.
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    /// Per-key rate limits (see [`limits`]); `Default` is unlimited.
    pub limiter: Arc<limits::RateLimiter>,
    /// Usage answers kept under their accounts' ledger tokens (see [`UsageAnswers`]).
    pub usage_answers: Arc<UsageAnswers>,
    /// Issue 28: the addresses webhook endpoints may have besides public ones (the operator's
    /// `--webhook-allow-cidr`); `Default` allows public addresses only.
    pub webhook_policy: Arc<AddressPolicy>,
    /// Issue 29: this API's shard and the directory it forwards other trees' requests by
    /// (see [`crate::shards`]); None in a deployment of one database.
    pub shards: Option<Arc<crate::shards::ShardRoutes>>,
}

impl AppState {
    /// The same state with webhook endpoints checked against `policy`.
    pub fn with_webhook_policy(mut self, policy: AddressPolicy) -> AppState {
        self.webhook_policy = Arc::new(policy);
        self
    }
}
