//! Invoices, their lines, adjustments and credit notes.

#![allow(dead_code)]
use super::common::*;
use utoipa::ToSchema;

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
