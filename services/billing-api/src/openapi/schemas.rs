//! The shapes of the API's JSON (see `openapi.rs`'s header). Decimals are [`Decimal`]: a JSON
//! string such as `"12.30"`, never a number.

#![allow(dead_code)]
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

/// A closed list of words of the store's (`billing_store`), from the code itself.
fn words(words: impl IntoIterator<Item = &'static str>, about: &str) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(words))
        .description(Some(about))
        .build()
}

/// `billing_store::MovementKind`, all of them.
fn movement_kind() -> utoipa::openapi::Object {
    use billing_store::MovementKind;
    words(
        MovementKind::ALL.iter().map(|k| k.as_str()),
        "what the movement is",
    )
}

/// `billing_store::PaymentMethod`, all of them.
fn payment_method() -> utoipa::openapi::Object {
    use billing_store::PaymentMethod;
    words(
        PaymentMethod::ALL.iter().map(|m| m.as_str()),
        "how the invoice was paid",
    )
}

/// `billing_store::HoldStatus`, all of them.
fn hold_status() -> utoipa::openapi::Object {
    use billing_store::HoldStatus;
    words(
        HoldStatus::ALL.iter().map(|s| s.as_str()),
        "the hold's state",
    )
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
    /// Section 19: the wallet of this region of the price book (absent: home); each wallet
    /// holds its region's currency.
    #[schema(required = false)]
    pub region: Option<String>,
    /// When given, must be the wallet's currency (else 422 naming both).
    #[schema(required = false)]
    pub currency: Option<String>,
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
    /// What a new top-up paid of the account's unpaid invoices, oldest first (issue 24.2);
    /// empty for a refund, a repeated top-up, or with top-up settlement off.
    pub settled: Vec<Settled>,
    /// The wallet's balance after it.
    pub balance: Decimal,
    /// The wallet's region (null: home).
    pub region: Option<String>,
    /// The wallet's currency (null before any price book).
    pub currency: Option<String>,
}

#[derive(ToSchema)]
pub struct Movement {
    pub seq: i64,
    /// `topup`, `refund`, `settlement`, `credit_note`, `correction`.
    #[schema(schema_with = movement_kind)]
    pub kind: String,
    /// Signed: what the movement did to the balance.
    pub amount: Decimal,
    pub reference: String,
    #[schema(required = false)]
    pub document_id: String,
    pub at: String,
}

/// One invoice (partly) paid from the wallet.
#[derive(ToSchema)]
pub struct Settled {
    pub invoice: String,
    pub number: String,
    pub amount: Decimal,
}

/// `POST /v1/admin/invoices/{id}/settle`.
#[derive(ToSchema)]
pub struct SettleResult {
    /// The invoice's payment (method `wallet`).
    pub payment: Payment,
    /// The wallet's `settlement` movement (negative).
    pub movement: Movement,
    /// The wallet's balance after it.
    pub balance: Decimal,
    pub invoice: IssuedInvoice,
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
    /// `wallet` (settled from the wallet: at issue, by a top-up or on demand) or `external`
    /// (recorded by the admin).
    #[schema(schema_with = payment_method)]
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
    /// Section 19: the region the lease runs in (absent: home): the hold is that billing
    /// domain's, at the region's rate, against its quotas and wallet.
    #[schema(required = false)]
    pub region: String,
    // 86,400 and 300: the core's MAX_HOLD_TTL_S and DEFAULT_HOLD_TTL_S (the test
    // `hold_ttls_are_documented_as_the_core_has_them` in openapi.rs checks this text).
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
    // 86,400 and 300: the core's MAX_HOLD_TTL_S and DEFAULT_HOLD_TTL_S (the test
    // `hold_ttls_are_documented_as_the_core_has_them` in openapi.rs checks this text).
    /// The hold's new life from now, 1 to 86,400 (default 300).
    #[schema(required = false)]
    pub ttl_seconds: i64,
}

#[derive(ToSchema)]
pub struct HoldState {
    pub hold: String,
    #[schema(schema_with = hold_status)]
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

/// `GET /v1/me`: who the bearer token is.
#[derive(ToSchema)]
pub struct Me {
    pub role: Role,
    /// A customer key's account; null for the admin and ingest tokens.
    #[schema(required = true)]
    pub account: Option<String>,
    /// `admin`, `ingest`, or a customer key's key id.
    pub name: String,
    /// A customer key's id (the first 16 hex digits of its SHA-256, as the key list names
    /// it); null for the admin and ingest tokens.
    #[schema(required = true)]
    pub key_id: Option<String>,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Admin,
    Ingest,
    Customer,
}

/// `GET /v1/prices`: what an sku costs now, per unit-hour (`unit`: `card_hour` for `gpu.*`
/// skus, `gb_hour` for `storage.*`, `unit_hour` for any other family), from the price book
/// version rating the open period. Rates are never rounded (only amounts are).
#[derive(ToSchema)]
pub struct PriceList {
    /// RFC 3339: the instant the prices are for.
    pub as_of: String,
    /// The open period (`YYYY-MM`, price book timezone).
    pub period_label: String,
    /// The home region's (the top level of the price book), as are `skus` and `egress`.
    pub currency: String,
    /// IANA name: off-peak windows are local times of it.
    pub timezone: String,
    pub tax_rate: Decimal,
    /// The account's discount percent off every invoice's subtotal (0 without one), in every
    /// region.
    pub discount_percent: Decimal,
    pub skus: Vec<SkuPrice>,
    pub egress: Vec<EgressPrice>,
    /// Every other region of the price book (billing-semantics section 19), by name; empty
    /// without regions.
    pub regions: Vec<RegionPriceList>,
}

/// One region's prices in its own currency: only the skus it names, its off-peak windows
/// (local times of its timezone), its egress and its tax; its spot prices from its own
/// spot curve, else its price book's `spot_rate_per_hour`.
#[derive(ToSchema)]
pub struct RegionPriceList {
    /// The region's name in the price book (`[regions."name"]`).
    pub region: String,
    pub currency: String,
    /// IANA name: the region's off-peak windows are local times of it.
    pub timezone: String,
    pub tax_rate: Decimal,
    pub skus: Vec<SkuPrice>,
    pub egress: Vec<EgressPrice>,
}

#[derive(ToSchema)]
pub struct SkuPrice {
    pub sku: String,
    /// The sku's name up to its first `.`: skus of one family share a unit.
    pub family: String,
    pub unit: PriceUnit,
    /// On-demand tiers (a plain rate is one unbounded tier); empty when the sku is spot only.
    pub on_demand: Vec<TierPrice>,
    pub tier_mode: TierMode,
    /// The off-peak windows that apply to this sku and the on-demand rates inside them.
    pub offpeak: Vec<OffpeakPrice>,
    /// The spot price now (the latest spot price point, else the price book's
    /// `spot_rate_per_hour`); null when the sku cannot run as spot.
    #[schema(required = true)]
    pub spot_rate_per_hour: Option<Decimal>,
    /// A resource that runs less than this is billed this long (null: no minimum).
    #[schema(required = true)]
    pub minimum_seconds: Option<i64>,
    /// Per lease state (`stopped`, ...): the rate per unit-hour of the seconds in it.
    pub state_rates: BTreeMap<String, Decimal>,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)] // the wire names: card_hour, gb_hour, unit_hour
pub enum PriceUnit {
    CardHour,
    GbHour,
    UnitHour,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TierMode {
    Graduated,
    Volume,
}

#[derive(ToSchema)]
pub struct TierPrice {
    /// Cumulative unit-hours of the period this tier reaches; null: no bound.
    #[schema(required = true)]
    pub up_to_hours: Option<Decimal>,
    pub rate_per_hour: Decimal,
}

#[derive(ToSchema)]
pub struct OffpeakPrice {
    /// Local time of day, `HH:MM` (or `HH:MM:SS`); `to` may be `24:00`; `to` before `from`
    /// wraps past midnight.
    pub from: String,
    pub to: String,
    /// `mon` to `sun`.
    pub days: Vec<String>,
    pub multiplier: Decimal,
    /// One per on-demand tier: its rate times the multiplier.
    pub rates_per_hour: Vec<Decimal>,
}

#[derive(ToSchema)]
pub struct EgressPrice {
    /// `internet`, `cross_region`, ...
    pub dest: String,
    pub tiers: Vec<EgressTier>,
}

#[derive(ToSchema)]
pub struct EgressTier {
    /// Cumulative GB of the period this tier reaches; null: no bound.
    #[schema(required = true)]
    pub up_to_gb: Option<Decimal>,
    pub rate_per_gb: Decimal,
}

/// `POST /v1/estimate`: a lease to price.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EstimateRequest {
    /// Admin token only (required there): the account whose terms apply. A customer key
    /// prices for its own account.
    #[schema(required = false)]
    pub account: String,
    pub sku: String,
    /// Units, more than 0 and at most 10,000 (a decimal string, or an integer).
    pub quantity: Decimal,
    /// `on_demand` (default) or `spot`.
    #[schema(required = false)]
    pub class: String,
    /// A region of the price book; home when absent.
    #[schema(required = false)]
    pub region: String,
    /// RFC 3339.
    pub start: String,
    /// 1 to 2,678,400 (31 days).
    pub duration_seconds: i64,
}

/// What a lease would cost: its lines per billing period it touches, and the sums.
#[derive(ToSchema)]
pub struct EstimateAnswer {
    pub account: String,
    pub sku: String,
    /// `on_demand` or `spot`.
    pub class: String,
    pub quantity: Decimal,
    /// Null: home.
    pub region: Option<String>,
    pub start: String,
    pub end: String,
    pub currency: String,
    pub periods: Vec<EstimatePeriod>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
    /// The rule the estimate follows, in one sentence.
    pub basis: String,
}

/// The lease's part of one period's invoice: its lines, the account's discounts, the tax.
#[derive(ToSchema)]
pub struct EstimatePeriod {
    pub period: InvoicePeriod,
    pub lines: Vec<InvoiceLine>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
}
