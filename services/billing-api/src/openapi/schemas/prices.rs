//! The price list and estimates.

#![allow(dead_code)]
use super::common::*;
use super::invoices::*;
use std::collections::BTreeMap;
use utoipa::ToSchema;

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
