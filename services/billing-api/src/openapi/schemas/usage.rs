//! Usage and the open period's cost.

#![allow(dead_code)]
use super::common::*;
use super::invoices::*;
use utoipa::ToSchema;

/// `GET /v1/usage`: unit-seconds per bucket and group, one page.
#[derive(ToSchema)]
pub struct Usage {
    pub account: String,
    /// Section 19: the region asked for (null: home).
    #[schema(required = true)]
    pub region: Option<String>,
    /// The first bucket's start (the asked `from` floored to the granularity).
    pub from: String,
    /// The end of this page (the asked `to`, or earlier when `next_from` is set).
    pub to: String,
    pub granularity: Granularity,
    pub group_by: GroupBy,
    pub unit: UsageUnit,
    /// Groups with usage in range, ordered by key.
    pub groups: Vec<UsageGroup>,
    /// Ask again from here for the rest of the range; null when this page reaches `to`.
    #[schema(required = true)]
    pub next_from: Option<String>,
    pub group_limit: u32,
    /// Ask again with `group_after` set to it for the next groups; null on the last page.
    #[schema(required = true)]
    pub next_group_after: Option<String>,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    Second,
    Minute,
    Hour,
    Day,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    Sku,
    Lease,
    Resource,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UsageUnit {
    UnitSeconds,
}

#[derive(ToSchema)]
pub struct UsageGroup {
    /// The sku, lease or resource.
    pub key: String,
    /// One per bucket from `from` to `to`.
    pub buckets: Vec<UsageBucket>,
}

#[derive(ToSchema)]
pub struct UsageBucket {
    /// RFC 3339, UTC.
    pub start: String,
    /// Quantity times seconds in the bucket.
    pub unit_seconds: Decimal,
}

/// `GET /v1/cost/current`: the open period rated so far.
#[derive(ToSchema)]
pub struct CostCurrent {
    /// The instant the figure is for (the clock, or `as_known_at`).
    pub as_of: String,
    /// Only with `as_known_at`: the instant asked.
    #[schema(required = false)]
    pub as_known_at: String,
    pub period_label: String,
    /// Always true: the period is open, the figure moves as usage arrives.
    pub provisional: bool,
    /// Only without `as_known_at`: the batch position the figure was computed at (null:
    /// rated on read, nothing folded for this period yet).
    #[schema(required = false, value_type = Value)]
    pub position: (),
    /// Only without `as_known_at`: when the figure was computed.
    #[schema(required = false)]
    pub updated_at: String,
    pub invoice: RatedInvoice,
}
