//! `GET /openapi.json`, generated from the code with utoipa.
//!
//! One stub per route carries its path, parameters, bodies and answers; [`schemas`] holds the
//! shapes of the JSON the handlers write with `json!` or with types of billing-core and
//! billing-store (which do not depend on utoipa). Those structs are never built: they mirror
//! the JSON field for field (money and quantities are decimal strings), and
//! tests/openapi_client.rs checks real answers against them with every object closed to
//! extra fields, so a field added to an answer and not here fails a test. Every error answer
//! is `{"error", "message"}` ([`Errors`] adds it to each 4xx/5xx, and 401 and 429 to each
//! route taking a bearer token).

use axum::Json;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "gpubill", description = "Billing and metering for GPU rental: ingest, usage, invoices, admin."),
    paths(health, ready, openapi_json, metrics, ingest, usage, cost_current, invoices, invoice, create_account, list_accounts, put_pricebook, close, export, dead_letters, adjustments, put_quotas, authorize, extend_hold, release_hold, balance, quota_decisions, put_term, delete_term, list_terms, put_profile, get_profile, put_seller, get_seller, topups, refunds, payments, journal, add_key, list_keys, revoke_key, audit),
    components(schemas(crate::handlers::IngestResult, crate::handlers::NewAccount, schemas::Error, schemas::Document)),
    modifiers(&Bearer, &Errors)
)]
struct Doc;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every 4xx and 5xx answer is the `Error` body (`ApiError` and the `json_errors` middleware
/// write no other); every route taking a bearer token may answer 401 (no or unknown token)
/// and 429 (its key's rate limit, with `Retry-After`).
struct Errors;

impl utoipa::Modify for Errors {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{Content, Ref, RefOr, Response};
        let error = || Content::new(Some(Ref::from_schema_name("Error")));
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                let answers = &mut op.responses.responses;
                if op.security.is_some() {
                    for (status, description) in [
                        ("401", "no bearer token, or one the server does not know"),
                        (
                            "429",
                            "the key's rate limit: retry after Retry-After seconds",
                        ),
                    ] {
                        answers
                            .entry(status.to_string())
                            .or_insert_with(|| RefOr::T(Response::new(description)));
                    }
                }
                for (status, answer) in answers.iter_mut() {
                    if let RefOr::T(answer) = answer
                        && status.as_str() >= "400"
                        && answer.content.is_empty()
                    {
                        answer
                            .content
                            .insert("application/json".to_string(), error());
                    }
                }
            }
        }
    }
}

pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(Doc::openapi())
}

/// The shapes of the API's JSON (see the module's header). Decimals are [`Decimal`]: a JSON
/// string such as `"12.30"`, never a number.
#[allow(dead_code)]
pub(crate) mod schemas {
    use std::collections::BTreeMap;
    use utoipa::ToSchema;

    /// A decimal number as a JSON string (`"806.85"`, `"-5.00"`, `"0.25"`): money has two
    /// decimals, quantities as many as they need; never a JSON number, never an exponent.
    #[derive(ToSchema)]
    #[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$")]
    pub struct Decimal(String);

    /// Bytes as they are: a PDF, or a TOML price book (UTF-8 text, sent as a file).
    #[derive(ToSchema)]
    #[schema(format = Binary)]
    pub struct Binary(String);

    /// Every 4xx and 5xx answer.
    #[derive(ToSchema)]
    pub struct Error {
        /// A stable code: `bad_request`, `unauthorized`, `forbidden`, `not_found`,
        /// `conflict`, `too_large`, `invalid`, `unavailable`, `timeout`, `rate_limited`,
        /// `internal`, `method_not_allowed`, `unsupported_media_type`.
        pub error: String,
        /// What went wrong, for a person (5xx: generic; the cause is in the server log).
        pub message: String,
    }

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
        /// `{lease?, resource?, dest, bytes, time}`; and the rental events of part 2.
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
    }

    /// `POST /v1/admin/accounts`: the API key is shown this once.
    #[derive(ToSchema)]
    pub struct AccountCreated {
        pub id: String,
        /// The account's bearer token (`gbk_...`) for its own usage, cost and invoices.
        pub api_key: String,
    }

    /// `GET /v1/admin/accounts`: one page of registered accounts, in id order.
    #[derive(ToSchema)]
    pub struct AccountList {
        pub accounts: Vec<AccountSummary>,
        /// Ask again with `after` set to it for the next page; null on the last page.
        #[schema(required = true)]
        pub next_after: Option<String>,
    }

    #[derive(ToSchema)]
    pub struct AccountSummary {
        pub id: String,
        pub created_at: String,
        /// Null when no quotas were ever set.
        #[schema(required = true)]
        pub quotas: Option<Quotas>,
        #[schema(required = true)]
        pub quotas_updated_at: Option<String>,
    }

    /// `POST /v1/admin/accounts/{id}/keys`: another key, shown this once.
    #[derive(ToSchema)]
    pub struct KeyCreated {
        pub account: String,
        /// Names the key in lists and revocations: the first 16 hex digits of its hash.
        pub key_id: String,
        pub api_key: String,
    }

    #[derive(ToSchema)]
    pub struct KeyList {
        pub account: String,
        pub keys: Vec<KeyInfo>,
    }

    #[derive(ToSchema)]
    pub struct KeyInfo {
        pub key_id: String,
        pub created_at: String,
    }

    /// `GET /v1/admin/audit`: admin changes in order, one page.
    #[derive(ToSchema)]
    pub struct AuditLog {
        pub entries: Vec<AuditEntry>,
        /// Ask again with `after` set to it for the next page; null on the last page.
        #[schema(required = true)]
        pub next_after: Option<i64>,
    }

    #[derive(ToSchema)]
    pub struct AuditEntry {
        pub seq: i64,
        pub at: String,
        /// Always `admin`: only the admin token makes changes.
        pub actor: String,
        /// The command's type (`pricebook.put`, `account.create`, `wallet.movement`, ...).
        pub action: String,
        /// The command as recorded.
        #[schema(value_type = Object)]
        pub command: (),
    }

    /// `PUT /v1/admin/pricebook`: the version stored.
    #[derive(ToSchema)]
    pub struct PriceBookVersion {
        pub version: i64,
    }

    /// `GET /v1/usage`: unit-seconds per bucket and group, one page.
    #[derive(ToSchema)]
    pub struct Usage {
        pub account: String,
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

    /// The invoice of billing-semantics.md section 6: what rating says, before it is issued.
    #[derive(ToSchema)]
    pub struct RatedInvoice {
        pub account: String,
        pub currency: String,
        pub period: InvoicePeriod,
        pub lines: Vec<InvoiceLine>,
        pub subtotal: Decimal,
        pub discount: Decimal,
        pub credit: Decimal,
        pub tax: Decimal,
        pub total: Decimal,
    }

    /// `[start, end)`, RFC 3339 UTC.
    #[derive(ToSchema)]
    pub struct InvoicePeriod {
        pub start: String,
        pub end: String,
    }

    /// One line: a component of a sku (or an egress destination) in one tier.
    #[derive(ToSchema)]
    pub struct InvoiceLine {
        /// `on_demand`, `spot`, `reserved_commitment`, `reserved_usage`, `minimum`,
        /// `egress`, `package`, `package_usage`, `subscription`, `sla_compensation`,
        /// `spot_interrupted` or `state:<lease state>`.
        pub component: String,
        #[schema(required = false)]
        pub sku: String,
        /// Egress lines: the destination class.
        #[schema(required = false)]
        pub dest: String,
        pub tier: u32,
        /// Only on `on_demand` lines: the off-peak multiplier.
        #[schema(required = false)]
        pub multiplier: Decimal,
        /// Only on `spot` lines: the rate per unit-hour.
        #[schema(required = false)]
        pub price: Decimal,
        /// Only on `package` and `package_usage` lines: the package's id.
        #[schema(required = false)]
        pub package: String,
        /// Only on `subscription` lines: the subscription's id.
        #[schema(required = false)]
        pub subscription: String,
        pub quantity: Decimal,
        pub unit: LineUnit,
        pub amount: Decimal,
        /// Only on `sla_compensation` lines: the amount credited.
        #[schema(required = false)]
        pub compensation: Decimal,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum LineUnit {
        UnitSeconds,
        Gb,
        Package,
    }

    /// An issued invoice: the section 6 invoice with its identity, the adjustment lines it
    /// carries (section 7), what it owes after them and what is paid of it.
    #[derive(ToSchema)]
    pub struct IssuedInvoice {
        pub kind: InvoiceKind,
        pub id: String,
        /// Gapless per year: `INV-2026-000001`.
        pub number: String,
        /// On the server's clock: `overdue` once unpaid past the payment days.
        pub status: InvoiceStatus,
        pub issued_at: String,
        pub pricebook_version: i64,
        pub account: String,
        pub currency: String,
        pub period: InvoicePeriod,
        pub lines: Vec<InvoiceLine>,
        pub subtotal: Decimal,
        pub discount: Decimal,
        pub credit: Decimal,
        pub tax: Decimal,
        pub total: Decimal,
        /// Late usage of earlier closed periods (absent when none).
        #[schema(required = false)]
        pub adjustments: Vec<AdjustmentLine>,
        /// `total` plus the adjustment lines, never below 0.00.
        pub amount_due: Decimal,
        /// Paid so far (from the wallet at issue, or recorded by the admin).
        pub paid: Decimal,
        /// The credit note issued with this invoice, when its adjustments left one.
        #[schema(required = false)]
        pub credit_note: String,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum InvoiceKind {
        Invoice,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum InvoiceStatus {
        Issued,
        Paid,
        Overdue,
    }

    /// What an earlier period's invoice changes by, per component (section 7).
    #[derive(ToSchema)]
    pub struct AdjustmentLine {
        /// The original invoice's period, `YYYY-MM`.
        pub period: String,
        /// The original invoice; null when the account had none for the period.
        #[schema(required = true)]
        pub invoice_id: Option<String>,
        #[schema(required = true)]
        pub invoice_number: Option<String>,
        /// A line component, or `discount`, `credit`, `tax`.
        pub component: String,
        /// Signed as it moves what is owed.
        pub amount: Decimal,
    }

    /// A credit note: what a negative net adjustment left after the new invoice owed
    /// nothing more, credited to the wallet. Own number series.
    #[derive(ToSchema)]
    pub struct CreditNote {
        pub kind: CreditNoteKind,
        pub id: String,
        pub number: String,
        pub account: String,
        pub currency: String,
        /// The period whose close issued it, `YYYY-MM`.
        pub period: String,
        pub issued_at: String,
        /// The invoice issued with it (its adjustment lines hold the detail).
        pub invoice_id: String,
        pub invoice_number: String,
        /// The original invoices whose net adjustment was negative, with that net.
        pub references: Vec<CreditReference>,
        /// Positive: what is credited.
        pub amount: Decimal,
        pub status: CreditNoteStatus,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum CreditNoteKind {
        CreditNote,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum CreditNoteStatus {
        Credited,
    }

    #[derive(ToSchema)]
    pub struct CreditReference {
        pub period: String,
        #[schema(required = true)]
        pub invoice_id: Option<String>,
        #[schema(required = true)]
        pub invoice_number: Option<String>,
        pub amount: Decimal,
    }

    /// `GET /v1/invoices` lists both; `GET /v1/invoices/{id}` answers either.
    #[derive(ToSchema)]
    #[serde(untagged)]
    #[schema(discriminator(property_name = "kind", mapping(
        ("invoice" = "#/components/schemas/IssuedInvoice"),
        ("credit_note" = "#/components/schemas/CreditNote")
    )))]
    pub enum Document {
        Invoice(IssuedInvoice),
        CreditNote(CreditNote),
    }

    /// An account's quotas, every field optional.
    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Quotas {
        #[schema(required = false)]
        pub prepaid_balance: Decimal,
        #[schema(required = false)]
        pub spend_limit: Decimal,
        /// Per sku, GPU-hours per period.
        #[schema(required = false)]
        pub gpu_hours: BTreeMap<String, Decimal>,
        /// Per sku, units in use at once.
        #[schema(required = false)]
        pub max_concurrent: BTreeMap<String, Decimal>,
        /// Warn at this fraction of a limit (default 0.8).
        #[schema(required = false)]
        pub warn_at: Decimal,
    }

    /// A wallet top-up or refund.
    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct MoneyMovement {
        /// Positive, at most 2 decimals.
        pub amount: Decimal,
        /// 1 to 128 printable ASCII, no `:`; makes the call idempotent.
        pub reference: String,
    }

    /// A payment recorded outside the wallet.
    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct NewPayment {
        /// Without it: all the invoice still owes.
        #[schema(required = false)]
        pub amount: Decimal,
        /// Makes the call idempotent.
        pub reference: String,
    }

    #[derive(ToSchema)]
    pub struct MovementResult {
        pub movement: Movement,
        /// False when the reference was used already for the same movement.
        pub created: bool,
        /// The wallet's balance after it.
        pub balance: Decimal,
    }

    #[derive(ToSchema)]
    pub struct Movement {
        pub seq: i64,
        /// `topup`, `refund`, `settlement`, `credit_note`, ...
        pub kind: String,
        /// Signed: what the movement did to the balance.
        pub amount: Decimal,
        pub reference: String,
        #[schema(required = false)]
        pub document_id: String,
        pub at: String,
    }

    #[derive(ToSchema)]
    pub struct PaymentResult {
        pub payment: Payment,
        pub created: bool,
        pub invoice: IssuedInvoice,
    }

    #[derive(ToSchema)]
    pub struct Payment {
        pub seq: i64,
        pub amount: Decimal,
        /// `wallet` (settled at issue) or `external` (recorded by the admin).
        pub method: String,
        pub reference: String,
        pub at: String,
    }

    /// `POST /v1/authorize`: may this usage start?
    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct AuthorizeRequest {
        pub account: String,
        pub sku: String,
        /// Units (a decimal string, or an integer).
        pub quantity: Decimal,
        /// For how long.
        pub seconds: i64,
        #[schema(required = false)]
        pub lease: String,
        /// The hold's life, 1 to 86,400 (default 300).
        #[schema(required = false)]
        pub ttl_seconds: i64,
    }

    /// `allowed` with a hold, or `denied` with the quota that refused.
    #[derive(ToSchema)]
    pub struct Authorization {
        pub decision: Decision,
        #[schema(required = false)]
        pub hold: String,
        /// Allowed: the amount held.
        #[schema(required = false)]
        pub amount: Decimal,
        #[schema(required = false)]
        pub expires_at: String,
        /// Denied: the quota's name.
        #[schema(required = false)]
        pub quota: String,
        #[schema(required = false)]
        pub used: Decimal,
        #[schema(required = false)]
        pub requested: Decimal,
        #[schema(required = false)]
        pub limit: Decimal,
    }

    #[derive(ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Decision {
        Allowed,
        Denied,
    }

    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ExtendHold {
        /// The hold's new life from now, 1 to 86,400 (default 300).
        #[schema(required = false)]
        pub ttl_seconds: i64,
    }

    #[derive(ToSchema)]
    pub struct HoldState {
        pub hold: String,
        pub status: String,
        /// Not after a release.
        #[schema(required = false)]
        pub expires_at: String,
    }

    /// The buyer's (or the seller's) fields for a 增值税发票; optional fields may be omitted
    /// or null; no control characters; no other field.
    #[derive(ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Profile {
        /// 名称, 1 to 200 characters.
        pub name: String,
        /// 纳税人识别号: 15, 17, 18 or 20 of 0-9 A-Z.
        pub tax_id: Option<String>,
        pub address: Option<String>,
        pub phone: Option<String>,
        /// 开户行.
        pub bank: Option<String>,
        /// 账号.
        pub bank_account: Option<String>,
        pub email: Option<String>,
    }

    #[derive(ToSchema)]
    pub struct ProfileSet {
        /// Only for an account's profile.
        #[schema(required = false)]
        pub account: String,
        pub profile: Profile,
        /// False when it was set so already.
        pub changed: bool,
    }

    #[derive(ToSchema)]
    pub struct ProfileShown {
        /// Only for an account's profile.
        #[schema(required = false)]
        pub account: String,
        /// Null when none was set.
        #[schema(required = true)]
        pub profile: Option<Profile>,
        #[schema(required = true)]
        pub updated_at_ms: Option<i64>,
    }

    #[derive(ToSchema)]
    pub struct TermSet {
        pub account: String,
        pub kind: String,
        pub term_id: String,
        /// Only for a PUT: the fields set.
        #[schema(required = false, value_type = Object)]
        pub body: (),
        /// False when nothing changed.
        pub changed: bool,
    }
}

use schemas::*;

// Path descriptions: one stub per route, next to nothing else, so the document lists every
// route with its parameters and answers (the test below checks it against the router).

#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "the process is up", body = String, content_type = "text/plain")))]
#[allow(dead_code)]
fn health() {}

#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "the database answers", body = String, content_type = "text/plain"), (status = 503, description = "it does not")))]
#[allow(dead_code)]
fn ready() {}

#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "this document", body = Object)))]
#[allow(dead_code)]
fn openapi_json() {}

#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain"), (status = 404, description = "no metrics recorder installed")))]
#[allow(dead_code)]
fn metrics() {}

#[utoipa::path(post, path = "/v1/events", security(("bearer" = [])),
    request_body(description = "a batch of up to 10,000 CloudEvents, 10 MiB at most; the ingest or the admin token. The same route takes one event as application/cloudevents+json, and under application/json one event (an object) or a batch (an array); only the batch is listed here, as generated clients cannot tell one JSON body from another by content type. It also takes one event in CloudEvents binary content mode (a ce-specversion header, the other attributes in ce-* headers with percent-encoded values, the data alone as the body, content-type naming the data's type, which must be JSON: application/json or a +json type); a binary event that cannot be converted is a rejected event with its reason",
        content = Vec<CloudEvent>, content_type = "application/cloudevents-batch+json"),
    responses((status = 200, description = "durable; per-event status (a record that is not valid JSON is a rejected event, not a 400)", body = crate::handlers::IngestResult),
        (status = 400, description = "unsupported content type, or the body is not an array"), (status = 403, description = "a customer key"),
        (status = 413, description = "more than 10,000 events or 10 MiB"), (status = 503, description = "Kafka mode: the event log did not acknowledge the batch; retry it")))]
#[allow(dead_code)]
fn ingest() {}

#[utoipa::path(get, path = "/v1/usage", security(("bearer" = [])), params(crate::usage::UsageQuery),
    responses((status = 200, description = "unit-seconds per bucket and group; next_from when there are more buckets, next_group_after when there are more groups", body = Usage),
        (status = 400, description = "bad range, granularity, group_by or group_limit"), (status = 403, description = "not a customer key")))]
#[allow(dead_code)]
fn usage() {}

#[utoipa::path(get, path = "/v1/cost/current", security(("bearer" = [])), params(crate::finance::KnownAtQuery),
    responses((status = 200, description = "the current period rated so far, shaped like an invoice; with as_known_at, what it said then from the events ingested by then", body = CostCurrent),
        (status = 400, description = "as_known_at not RFC 3339 or in the future"), (status = 403, description = "not a customer key"), (status = 409, description = "no price book applies")))]
#[allow(dead_code)]
fn cost_current() {}

#[utoipa::path(get, path = "/v1/invoices", security(("bearer" = [])), params(("period" = Option<String>, Query, description = "`YYYY-MM`: only this period's")),
    responses((status = 200, description = "the caller's invoices (kind invoice: status issued|paid|overdue, adjustments, amount_due, paid, credit_note) and credit notes (kind credit_note: number, invoice_id, references, amount), by period, invoices first, then number", body = Vec<Document>),
        (status = 403, description = "not a customer key")))]
#[allow(dead_code)]
fn invoices() {}

#[utoipa::path(get, path = "/v1/invoices/{id}", security(("bearer" = [])), params(("id" = String, Path, description = "invoice or credit note id; append .csv for CSV, .html for a printable A4 page, .pdf for that page as PDF"),
        ("lang" = Option<String>, Query, description = ".html and .pdf: en (default) or zh, the labels' language")),
    responses((status = 200, description = "the invoice (JSON of billing-semantics.md section 6 plus kind, id, number, status, issued_at, amount_due, paid, adjustments) or credit note; .csv: text/csv; .html: text/html with the seller's and buyer's profiles; .pdf: application/pdf",
            content((Document = "application/json"), (String = "text/csv"), (String = "text/html"), (inline(Binary) = "application/pdf"))),
        (status = 400, description = "lang neither en nor zh"), (status = 403, description = "not a customer key"), (status = 404, description = "no such invoice for this account"),
        (status = 503, description = ".pdf: Chromium is not installed on the server (apt-get install chromium), or busy")))]
#[allow(dead_code)]
fn invoice() {}

#[utoipa::path(post, path = "/v1/admin/accounts", security(("bearer" = [])), request_body = crate::handlers::NewAccount,
    responses((status = 201, description = "created: the key is shown once", body = AccountCreated), (status = 400, description = "bad id"), (status = 403, description = "not the admin token"), (status = 409, description = "exists")))]
#[allow(dead_code)]
fn create_account() {}

#[utoipa::path(get, path = "/v1/admin/accounts", security(("bearer" = [])), params(crate::handlers::AccountsQuery),
    responses((status = 200, description = "registered accounts in id order with their quotas", body = AccountList), (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn list_accounts() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 201, description = "another key for the account, shown once; the old keys keep working until revoked", body = KeyCreated),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account")))]
#[allow(dead_code)]
fn add_key() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "the account's key ids and when each was made", body = KeyList),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account")))]
#[allow(dead_code)]
fn list_keys() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/keys/{key_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("key_id" = String, Path, description = "16 hex digits, from the key list")),
    responses((status = 204, description = "revoked: the key stops working at once, on every engine"), (status = 400, description = "key_id not 16 hex digits"),
        (status = 403, description = "not the admin token"), (status = 404, description = "the account has no such key")))]
#[allow(dead_code)]
fn revoke_key() {}

#[utoipa::path(get, path = "/v1/admin/audit", security(("bearer" = [])), params(("after" = Option<i64>, Query, description = "a seq: the entries after it"), ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "every admin change (the recorded commands), who made it and when, in order", body = AuditLog),
        (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn audit() {}

#[utoipa::path(put, path = "/v1/admin/pricebook", security(("bearer" = [])),
    request_body(content = inline(Binary), content_type = "application/toml", description = "a whole price book in TOML, UTF-8 (see examples/pricebook.toml and schemas/pricebook.schema.json)"),
    responses((status = 201, description = "stored as a new version", body = PriceBookVersion), (status = 400, description = "not UTF-8"), (status = 403, description = "not the admin token"), (status = 422, description = "invalid: the message names the key and value")))]
#[allow(dead_code)]
fn put_pricebook() {}

#[utoipa::path(post, path = "/v1/admin/invoices/close", security(("bearer" = [])), params(("period" = String, Query, description = "`YYYY-MM`")),
    responses((status = 200, description = "the period's invoices (the same ones when closed again)", body = Vec<IssuedInvoice>), (status = 400, description = "no or bad period"),
        (status = 403, description = "not the admin token"), (status = 409, description = "unpriced usage, no price book, or the period has not ended")))]
#[allow(dead_code)]
fn close() {}

#[utoipa::path(get, path = "/v1/admin/exports/invoices", security(("bearer" = [])),
    params(("period" = String, Query, description = "`YYYY-MM`"), ("format" = Option<String>, Query, description = "`csv` or `jsonl` (default)")),
    responses((status = 200, description = "the period's invoices and credit notes: CSV, one row per line, total and adjustment; or JSON lines, one document each",
            content((String = "text/csv"), (String = "application/jsonl"))),
        (status = 400, description = "bad period or format"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn export() {}

#[utoipa::path(get, path = "/v1/admin/dead-letters", security(("bearer" = [])), params(crate::handlers::PageQuery),
    responses((status = 200, description = "{\"dead_letters\": [rejected records with reasons], \"next_after\"}", body = Object), (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn dead_letters() {}

#[utoipa::path(get, path = "/v1/admin/adjustments", security(("bearer" = [])), params(crate::finance::AdjustmentsQuery),
    responses((status = 200, description = "{\"pending_adjustments\": [...]}: what the next close will adjust: per account and closed period, the effective and recomputed totals and the adjustment lines", body = Object),
        (status = 403, description = "not the admin token"), (status = 409, description = "the period is not closed, or no price book")))]
#[allow(dead_code)]
fn adjustments() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/quotas", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body = Quotas,
    responses((status = 200, description = "the quotas set", body = Quotas), (status = 400, description = "not a quotas object"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account"), (status = 422, description = "invalid: the message names the field")))]
#[allow(dead_code)]
fn put_quotas() {}

#[utoipa::path(post, path = "/v1/authorize", security(("bearer" = [])), request_body = AuthorizeRequest,
    responses((status = 200, description = "allowed with a hold, or denied", body = Authorization), (status = 400, description = "not JSON"), (status = 403, description = "a customer key"),
        (status = 404, description = "unknown account"), (status = 409, description = "no price book"), (status = 422, description = "bad quantity, seconds, ttl or unknown sku")))]
#[allow(dead_code)]
fn authorize() {}

#[utoipa::path(post, path = "/v1/holds/{id}/extend", security(("bearer" = [])), params(("id" = String, Path, description = "hold id")),
    request_body(content = ExtendHold, description = "may be empty"),
    responses((status = 200, description = "extended", body = HoldState), (status = 404, description = "unknown hold"), (status = 409, description = "not live"), (status = 422, description = "bad ttl_seconds")))]
#[allow(dead_code)]
fn extend_hold() {}

#[utoipa::path(post, path = "/v1/holds/{id}/release", security(("bearer" = [])), params(("id" = String, Path, description = "hold id")),
    responses((status = 200, description = "released", body = HoldState), (status = 404, description = "unknown hold"), (status = 409, description = "not live")))]
#[allow(dead_code)]
fn release_hold() {}

#[utoipa::path(get, path = "/v1/balance", security(("bearer" = [])), params(("account" = Option<String>, Query, description = "the admin token names the account; a customer key reads its own")),
    responses((status = 200, description = "wallet {balance, outstanding, movements [{seq, kind, amount, reference, document_id, at}]}, prepaid balance, period cost, live holds, available, quotas; packages {id, sku, remaining_unit_seconds, from, to}, credits {id, amount, remaining, from, to}, subscriptions {id, sku, current_cycle, cycle_start, cycle_end, cycles_left, cycles}, sla_compensation_credited, sla_compensation_left (instants in Unix seconds)", body = Object),
        (status = 400, description = "the admin token without account"), (status = 403, description = "the ingest token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn balance() {}

#[utoipa::path(get, path = "/v1/quota/decisions", security(("bearer" = [])),
    params(("account" = Option<String>, Query, description = "admin: one account"), ("quota" = Option<String>, Query, description = "admin: one quota"),
        ("kind" = Option<String>, Query, description = "warn, limit or clear"), ("after" = Option<i64>, Query, description = "a seq: the decisions after it"),
        ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "{\"decisions\":[{id, account, quota, period, kind, used, limit, position, at_ms}], \"next_after\"}: oldest first; a customer key reads its own", body = Object),
        (status = 400, description = "bad kind or limit"), (status = 403, description = "the ingest token")))]
#[allow(dead_code)]
fn quota_decisions() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "reservations, discounts, credits, packages or subscriptions"), ("term_id" = String, Path, description = "the term's id (1 to 256 of A-Z a-z 0-9 . _ -); credits, packages and subscriptions take it as their price book `id`")),
    request_body(content = Object, description = "the price book entry's fields without `account` and `id`, decimals as strings, instants RFC 3339; e.g. a package {\"sku\",\"hours\",\"from\",\"to\",\"price\"}"),
    responses((status = 200, description = "changed false when the same body was set already", body = TermSet),
        (status = 400, description = "invalid: the message names the key and value"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account or kind"), (status = 409, description = "a change to what has started or been consumed, or no price book yet")))]
#[allow(dead_code)]
fn put_term() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "term kind"), ("term_id" = String, Path, description = "term id")),
    responses((status = 200, description = "ended (a started subscription keeps its started cycles); changed false when ended already", body = TermSet),
        (status = 403, description = "not the admin token"), (status = 404, description = "unknown account or term"), (status = 409, description = "started or consumed, or a price book term")))]
#[allow(dead_code)]
fn delete_term() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/terms", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "{\"account\",\"terms\":[{kind, term_id, body, rev, updated_at_ms}]}: the live terms set by commands", body = Object),
        (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn list_terms() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = Profile, description = "the buyer's 增值税发票 fields"),
    responses((status = 200, description = "changed false when the account had this profile already", body = ProfileSet),
        (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account"),
        (status = 413, description = "too large")))]
#[allow(dead_code)]
fn put_profile() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "profile null when none was set", body = ProfileShown), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn get_profile() {}

#[utoipa::path(put, path = "/v1/admin/seller", security(("bearer" = [])),
    request_body(content = Profile, description = "the seller's (the platform's) fields, as an account's profile"),
    responses((status = 200, description = "changed false when it was set so already", body = ProfileSet), (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token"),
        (status = 413, description = "too large")))]
#[allow(dead_code)]
fn put_seller() {}

#[utoipa::path(get, path = "/v1/admin/seller", security(("bearer" = [])),
    responses((status = 200, description = "profile null when none was set", body = ProfileShown), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn get_seller() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/topups", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = MoneyMovement, example = json!({"amount": "100.00", "reference": "wire-1"})),
    responses((status = 201, description = "credited", body = MovementResult), (status = 200, description = "the same top-up again (created false)", body = MovementResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account"), (status = 409, description = "the reference was used with another amount")))]
#[allow(dead_code)]
fn topups() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/refunds", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = MoneyMovement, description = "as for top-ups"),
    responses((status = 201, description = "refunded", body = MovementResult), (status = 200, description = "the same refund again (created false)", body = MovementResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account"), (status = 409, description = "more than the balance, or the reference used otherwise")))]
#[allow(dead_code)]
fn refunds() {}

#[utoipa::path(post, path = "/v1/admin/invoices/{id}/payments", security(("bearer" = [])), params(("id" = String, Path, description = "invoice id")),
    request_body(content = NewPayment, example = json!({"amount": "20.00", "reference": "bank-1"})),
    responses((status = 201, description = "recorded", body = PaymentResult), (status = 200, description = "the same payment again (created false)", body = PaymentResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such invoice"), (status = 409, description = "paid already, more than owed, or the reference used otherwise")))]
#[allow(dead_code)]
fn payments() {}

#[utoipa::path(get, path = "/v1/admin/exports/journal", security(("bearer" = [])),
    params(("period" = String, Query, description = "`YYYY-MM`, closed"), ("format" = Option<String>, Query, description = "`csv` or `jsonl` (default)")),
    responses((status = 200, description = "double-entry lines {document, reference, date, customer, account, debit, credit, memo} as CSV or JSON lines, every document balanced",
            content((String = "text/csv"), (String = "application/jsonl"))),
        (status = 400, description = "bad period or format"), (status = 403, description = "not the admin token"), (status = 409, description = "the period is not closed")))]
#[allow(dead_code)]
fn journal() {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// `(path, method)` of every route `crate::router` declares, read from lib.rs's source:
    /// each `.route("PATH", get(..).post(..))` call.
    fn router_routes() -> Vec<(String, String)> {
        let source = include_str!("lib.rs");
        let mut out = Vec::new();
        for call in source.split(".route(").skip(1) {
            // The call's text up to its closing parenthesis.
            let mut depth = 1;
            let end = call
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map(|(i, _)| i)
                .expect("a .route( call closes");
            let call = &call[..end];
            let path = call.split('"').nth(1).expect("a route's path literal");
            let handlers = &call[call.find(',').expect("a route's handlers")..];
            for method in ["get", "post", "put", "delete", "patch"] {
                let called = handlers.match_indices(&format!("{method}(")).any(|(i, _)| {
                    i == 0
                        || !handlers.as_bytes()[i - 1].is_ascii_alphanumeric()
                            && handlers.as_bytes()[i - 1] != b'_'
                });
                if called {
                    out.push((path.to_string(), method.to_string()));
                }
            }
        }
        out
    }

    fn document() -> Value {
        serde_json::to_value(Doc::openapi()).expect("the document serializes")
    }

    #[test]
    fn every_route_of_the_router_is_in_the_document_and_nothing_else() {
        let routes = router_routes();
        assert!(routes.len() >= 30, "{routes:?}");
        assert!(routes.contains(&(
            "/v1/admin/accounts/{id}/terms/{kind}/{term_id}".into(),
            "delete".into()
        )));
        let doc = document();
        for (path, method) in &routes {
            assert!(
                doc["paths"][path][method].is_object(),
                "{} {path} is routed but missing from the OpenAPI document",
                method.to_uppercase()
            );
        }
        let paths = doc["paths"].as_object().unwrap();
        for (path, item) in paths {
            for method in item.as_object().unwrap().keys() {
                assert!(
                    routes.contains(&(path.clone(), method.clone())),
                    "{} {path} is documented but not routed",
                    method.to_uppercase()
                );
            }
        }
    }

    #[test]
    fn every_answer_and_json_body_has_a_schema_and_every_error_is_the_error_body() {
        let doc = document();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let at = format!("{} {path}", method.to_uppercase());
                assert!(op["operationId"].is_string(), "{at}: no operationId");
                for p in op["parameters"].as_array().into_iter().flatten() {
                    let name = p["name"].as_str().unwrap();
                    let in_path = path.contains(&format!("{{{name}}}"));
                    assert_eq!(
                        p["in"] == "path",
                        in_path,
                        "{at}: parameter {name} is {}",
                        p["in"]
                    );
                }
                for (ctype, content) in op["requestBody"]["content"]
                    .as_object()
                    .into_iter()
                    .flatten()
                {
                    assert!(
                        content["schema"].is_object(),
                        "{at}: request {ctype} has no schema"
                    );
                }
                let answers = op["responses"].as_object().unwrap();
                assert!(answers.keys().any(|s| s.starts_with('2')), "{at}: no 2xx");
                for (status, answer) in answers {
                    let content = answer["content"].as_object();
                    if status == "204" {
                        assert!(
                            content.is_none_or(|c| c.is_empty()),
                            "{at} 204 with content"
                        );
                        continue;
                    }
                    assert!(
                        content.is_some_and(|c| !c.is_empty()),
                        "{at} {status}: no content"
                    );
                    for (ctype, c) in content.unwrap() {
                        assert!(c["schema"].is_object(), "{at} {status} {ctype}: no schema");
                        if status.as_str() >= "400" {
                            assert_eq!(
                                c["schema"]["$ref"], "#/components/schemas/Error",
                                "{at} {status}"
                            );
                        }
                    }
                }
                if op["security"].is_array() {
                    assert!(
                        answers.contains_key("401") && answers.contains_key("429"),
                        "{at}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_reject_reason_is_in_the_outcome_schema() {
        let doc = document();
        let reasons = &doc["components"]["schemas"]["EventOutcome"]["properties"]["reason"]["enum"];
        for r in billing_core::event::RejectReason::ALL {
            assert!(
                reasons.as_array().unwrap().iter().any(|v| v == r.as_str()),
                "{} missing from {reasons}",
                r.as_str()
            );
        }
    }
}
