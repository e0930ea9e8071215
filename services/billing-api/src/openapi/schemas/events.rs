//! Ingest: CloudEvents in, each event's outcome.

#![allow(dead_code)]
use utoipa::ToSchema;

/// One event's fate, in request order.
#[derive(ToSchema)]
pub struct EventOutcome {
    pub status: EventStatus,
    /// Only when rejected: the closed list of reasons.
    #[schema(required = false, schema_with = reject_reason)]
    pub reason: String,
    /// Only when rejected: what was wrong, for a person.
    #[schema(required = false)]
    pub detail: String,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventStatus {
    Accepted,
    Duplicate,
    Rejected,
}

/// `billing_core::event::RejectReason`, all of them, from the code itself.
fn reject_reason() -> utoipa::openapi::Object {
    use billing_core::event::RejectReason;
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(RejectReason::ALL.map(RejectReason::as_str)))
        .description(Some("why the event was rejected"))
        .build()
}

/// A CloudEvent 1.0 in structured JSON mode (billing-semantics.md section 1). `data`
/// depends on `type`: its fields are given by the JSON Schemas of schemas/ in the
/// repository (`gpu.usage.schema.json`, `net.egress.schema.json`, ...).
#[derive(ToSchema)]
#[schema(example = json!({
    "specversion": "1.0", "id": "a1", "source": "node/1", "type": "gpu.usage",
    "subject": "acme", "time": "2026-11-02T05:00:30+08:00",
    "data": {"lease": "L1", "resource": "gpu0", "sku": "gpu.h100-80g",
             "start": "2026-11-02T05:00:00+08:00", "end": "2026-11-02T07:00:00+08:00"}
}))]
pub struct CloudEvent {
    pub specversion: SpecVersion,
    /// Unique per `source`: a redelivery reuses it (same content: duplicate; other
    /// content: rejected as conflict).
    #[schema(min_length = 1, max_length = 256)]
    pub id: String,
    #[schema(min_length = 1, max_length = 256)]
    pub source: String,
    #[schema(rename = "type")]
    pub event_type: EventType,
    /// The billed account's id (1 to 256 of `A-Z a-z 0-9 . _ -`).
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,256}$")]
    pub subject: String,
    /// RFC 3339 with an offset.
    #[schema(required = false)]
    pub time: String,
    /// gpu.usage: `{lease, resource, sku, class?, start, end, quantity?}`; net.egress:
    /// `{lease?, resource?, dest, bytes, time}`; the rental events of part 2; `lease.tags`.
    #[schema(value_type = Object)]
    pub data: (),
}

#[derive(ToSchema)]
pub enum SpecVersion {
    #[schema(rename = "1.0")]
    V1,
}

#[derive(ToSchema)]
pub enum EventType {
    #[schema(rename = "gpu.usage")]
    GpuUsage,
    #[schema(rename = "net.egress")]
    NetEgress,
    #[schema(rename = "lease.state")]
    LeaseState,
    #[schema(rename = "spot.price")]
    SpotPrice,
    #[schema(rename = "node.fault")]
    NodeFault,
    #[schema(rename = "net.counter")]
    NetCounter,
    /// Section 18: `{lease, tags, at}`, a lease's tags from `at` on.
    #[schema(rename = "lease.tags")]
    LeaseTags,
}
