//! Issue 28: budgets, alerts, the arrears policy and the notifications.

#![allow(dead_code)]
use super::common::*;
use utoipa::ToSchema;

/// `PUT /v1/accounts/{id}/budgets/{budget}`.
#[derive(ToSchema)]
pub struct BudgetRequest {
    /// Per period, in the account's currency.
    pub amount: Decimal,
    /// Percents of `amount`, each in (0, 1000], at most 2 decimals, no two equal (at most 10).
    pub thresholds: Vec<Decimal>,
    /// `{"account": id}` (default: the account itself), `{"node": id}` (an organization
    /// node: its subtree's cost; the account or one below it) or `{"tag": name, "value": v}`
    /// (the cost allocated to a project: `name` is the price book's `allocation_tag`).
    #[schema(value_type = Option<Object>)]
    pub scope: Option<serde_json::Value>,
    /// Also alert on the forecast: cost to date + burn rate x time left in the period.
    pub forecast: Option<bool>,
    /// `notify` (default) or `stop`: at 100% also a `limit` decision on quota `budget:<id>`
    /// (authorizations refused) until it resolves; needs a threshold of 100.
    pub action: Option<String>,
}

/// A budget as stored.
#[derive(ToSchema)]
pub struct BudgetSet {
    pub id: String,
    pub account: String,
    #[schema(value_type = Object)]
    pub scope: serde_json::Value,
    pub amount: Decimal,
    pub thresholds: Vec<Decimal>,
    pub forecast: bool,
    pub action: String,
}

/// `PUT /v1/accounts/{id}/alerts`.
#[derive(ToSchema)]
pub struct AlertsRequest {
    /// `{low_amount?, low_hours?}`: a prepaid balance below an amount, or below N hours at the
    /// current burn rate ("余额可用约 N 小时"); absent: off.
    #[schema(value_type = Option<Object>)]
    pub balance: Option<serde_json::Value>,
    /// `{days: [7, 3, 1]}`: expiry and renewal reminder windows; absent: off.
    #[schema(value_type = Option<Object>)]
    pub reminders: Option<serde_json::Value>,
}

/// An account's notification settings.
#[derive(ToSchema)]
pub struct NotifySettings {
    #[schema(value_type = Option<Object>)]
    pub budgets: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub balance: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub reminders: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub arrears: Option<serde_json::Value>,
}

/// `PUT /v1/admin/accounts/{id}/arrears`: the arrears sequence's timing (each 0 to 366 days).
#[derive(ToSchema)]
pub struct ArrearsPolicy {
    /// From `arrears.started` to the stop.
    pub grace_seconds: i64,
    /// From the stop to the release of the disks.
    pub release_after_seconds: i64,
}

/// The answer of `PUT /v1/admin/accounts/{id}/arrears`.
#[derive(ToSchema)]
pub struct ArrearsSet {
    pub account: String,
    pub grace_seconds: i64,
    pub release_after_seconds: i64,
}

/// `GET /v1/accounts/{id}/notify`.
#[derive(ToSchema)]
pub struct NotifyView {
    pub account: String,
    pub settings: NotifySettings,
    /// What each rule remembers (`budget:<id>`, `balance`, `arrears`, `reminders`) and, when
    /// it blocks authorizations, its `block` `{node, used, limit}`.
    #[schema(value_type = Vec<Object>)]
    pub states: Vec<serde_json::Value>,
    /// `{phase, episode, next: [step, unix seconds]?}` once the sequence has run.
    #[schema(value_type = Option<Object>)]
    pub arrears: Option<serde_json::Value>,
}

/// One notification.
#[derive(ToSchema)]
pub struct Notification {
    /// The outbox order (the order of delivery per endpoint).
    pub id: i64,
    pub account: String,
    /// The account's sequence number.
    pub seq: i64,
    /// The event type (`budget.crossed`, `arrears.stopped`, ...).
    #[schema(rename = "type")]
    pub kind: String,
    /// The dedupe key: the same fact always has the same key.
    pub key: String,
    pub at_s: i64,
    /// The body delivered to webhooks and the Kafka topic:
    /// `{type, timestamp, account, key, seq, data}`.
    #[schema(value_type = Object)]
    pub body: serde_json::Value,
    pub created_at_ms: i64,
}

/// `GET /v1/notifications`.
#[derive(ToSchema)]
pub struct NotificationList {
    pub notifications: Vec<Notification>,
}

/// `POST /v1/admin/notify/tick`.
#[derive(ToSchema)]
pub struct Ticked {
    /// Accounts with settings evaluated.
    pub accounts: usize,
}
