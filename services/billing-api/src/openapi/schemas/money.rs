//! Quotas, wallets and payments, authorizations and holds.

#![allow(dead_code)]
use super::common::*;
use super::invoices::*;
use std::collections::BTreeMap;
use utoipa::ToSchema;

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
    /// Denied: the account whose limit fired: the account asked for (its own quotas), or
    /// one of its ancestors whose `spend_limit` bounds its whole subtree (budgets per node,
    /// nearest first; in the request's region).
    #[schema(required = false)]
    pub node: String,
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
