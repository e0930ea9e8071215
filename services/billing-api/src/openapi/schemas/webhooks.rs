//! Issue 28: webhook endpoints and their delivery log (`webhooks.rs`).

#![allow(dead_code)]
use utoipa::ToSchema;

/// A webhook endpoint (never its secrets).
#[derive(ToSchema)]
pub struct WebhookEndpoint {
    /// `ep_` and 24 hex digits.
    pub id: String,
    /// The account; null for a platform endpoint (every account's notifications).
    #[schema(required = true)]
    pub account: Option<String>,
    pub url: String,
    pub description: String,
    /// The notification types it receives; empty: every type.
    pub event_types: Vec<String>,
    /// False once 5 days of failed attempts disabled it (`POST .../enable`).
    pub enabled: bool,
    /// Unix ms; null while enabled.
    #[schema(required = true)]
    pub disabled_at_ms: Option<i64>,
    /// The first failed attempt since the last success (Unix ms); null when healthy.
    #[schema(required = true)]
    pub failing_since_ms: Option<i64>,
    /// During a secret rotation: when the previous secret stops signing (Unix ms).
    #[schema(required = true)]
    pub previous_secret_expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
}

/// An endpoint just made or whose secret was just rotated, with the secret: shown once.
#[derive(ToSchema)]
pub struct WebhookEndpointWithSecret {
    pub id: String,
    #[schema(required = true)]
    pub account: Option<String>,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub enabled: bool,
    #[schema(required = true)]
    pub disabled_at_ms: Option<i64>,
    #[schema(required = true)]
    pub failing_since_ms: Option<i64>,
    #[schema(required = true)]
    pub previous_secret_expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
    /// `whsec_<base64>`: verify `webhook-signature` with it (Standard Webhooks).
    pub secret: String,
}

/// An endpoint after `POST .../enable`.
#[derive(ToSchema)]
pub struct WebhookEndpointEnabled {
    pub id: String,
    #[schema(required = true)]
    pub account: Option<String>,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub enabled: bool,
    #[schema(required = true)]
    pub disabled_at_ms: Option<i64>,
    #[schema(required = true)]
    pub failing_since_ms: Option<i64>,
    #[schema(required = true)]
    pub previous_secret_expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
    /// True when it was disabled and is enabled now; false when it was enabled.
    pub reenabled: bool,
}

/// `{url, event_types?, description?}`: a new endpoint.
#[derive(ToSchema)]
pub struct WebhookEndpointRequest {
    /// http or https; its host must resolve to public addresses only, unless the operator
    /// allowed a range (`--webhook-allow-cidr`).
    pub url: String,
    /// Notification types (`budget.crossed`, `test`, ...); absent or empty: every type.
    pub event_types: Option<Vec<String>>,
    /// At most 512 bytes.
    pub description: Option<String>,
}

/// A change of an endpoint: what is given changes.
#[derive(ToSchema)]
pub struct WebhookEndpointChange {
    pub url: Option<String>,
    pub event_types: Option<Vec<String>>,
    pub description: Option<String>,
}

/// An account's endpoints.
#[derive(ToSchema)]
pub struct WebhookEndpointList {
    pub account: String,
    pub endpoints: Vec<WebhookEndpoint>,
}

/// The platform's endpoints.
#[derive(ToSchema)]
pub struct PlatformWebhookList {
    pub endpoints: Vec<WebhookEndpoint>,
}

/// A test notification written.
#[derive(ToSchema)]
pub struct WebhookTestSent {
    pub account: String,
    /// `test`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its outbox id (`webhook-id` is `msg_<id>`).
    pub notification: i64,
    /// The account's sequence number of it.
    pub seq: i64,
}

/// One attempt of a delivery.
#[derive(ToSchema)]
pub struct DeliveryAttempt {
    /// 1-based over the delivery's life.
    pub attempt: i64,
    /// Unix ms.
    pub at_ms: i64,
    /// The HTTP status the endpoint answered; null when none came back.
    #[schema(required = true)]
    pub status_code: Option<i64>,
    /// What went wrong when no status came back (refused address, connection, timeout).
    #[schema(required = true)]
    pub error: Option<String>,
    pub latency_ms: i64,
}

/// A notification's delivery to an endpoint.
#[derive(ToSchema)]
pub struct WebhookDelivery {
    pub notification: i64,
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// When pending: the next attempt (Unix ms).
    #[schema(required = true)]
    pub next_attempt_at_ms: Option<i64>,
    pub attempts_total: i64,
    pub attempts: Vec<DeliveryAttempt>,
}

/// The delivery log of an endpoint, newest first.
#[derive(ToSchema)]
pub struct WebhookDeliveryLog {
    pub endpoint: String,
    pub deliveries: Vec<WebhookDelivery>,
}

/// A resend.
#[derive(ToSchema)]
pub struct WebhookResent {
    pub endpoint: String,
    pub notification: i64,
    /// False when the delivery is still pending (nothing changed).
    pub requeued: bool,
}
