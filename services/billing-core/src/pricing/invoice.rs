//! Lines, rounding and totals: billing-semantics.md sections 5 and 6.

use crate::common::money::{round_amount, show_quantity};
use crate::pricing::period::PeriodJson;
use crate::rental::lease::LeaseState;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// What a line bills. Lines sort by the component's *name* (section 6), so the order is
/// that of [`Component::as_str`], not of declaration: `state:host_down` sorts between
/// `spot_interrupted` and `subscription`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    Egress,
    Minimum,
    OnDemand,
    ReservedCommitment,
    ReservedUsage,
    Spot,
    /// Section 12: a package's price, once.
    Package,
    /// Section 12: usage a package covered (amount 0).
    PackageUsage,
    /// Section 10: downtime compensated onto the credit balance (amount 0).
    SlaCompensation,
    /// Section 9: spot usage waived after an interruption in its first hour (amount 0).
    SpotInterrupted,
    /// Section 8: `state:<state>`, seconds of a lease in a state its sku prices.
    State(LeaseState),
    /// Section 13: a subscription cycle, billed up front.
    Subscription,
    /// Section 15: the padding of on-demand runs to whole billing increments.
    Increment,
    /// Section 17: the unused part of an ended subscription cycle, credited (amount 0).
    SubscriptionRefund,
    /// Section 20: a one-off charge.
    Charge,
}

impl Component {
    /// Every component without a state, and one per state.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Egress => "egress",
            Component::Minimum => "minimum",
            Component::OnDemand => "on_demand",
            Component::ReservedCommitment => "reserved_commitment",
            Component::ReservedUsage => "reserved_usage",
            Component::Spot => "spot",
            Component::Package => "package",
            Component::PackageUsage => "package_usage",
            Component::SlaCompensation => "sla_compensation",
            Component::SpotInterrupted => "spot_interrupted",
            Component::State(s) => match s {
                LeaseState::Provisioning => "state:provisioning",
                LeaseState::Running => "state:running",
                LeaseState::Stopped => "state:stopped",
                LeaseState::HostDown => "state:host_down",
                LeaseState::Preempted => "state:preempted",
                LeaseState::Terminated => "state:terminated",
            },
            Component::Subscription => "subscription",
            Component::Increment => "increment",
            Component::SubscriptionRefund => "subscription_refund",
            Component::Charge => "charge",
        }
    }

    /// Strict: an unknown name is `None`.
    pub fn parse(s: &str) -> Option<Component> {
        const PLAIN: [Component; 14] = [
            Component::Egress,
            Component::Minimum,
            Component::OnDemand,
            Component::ReservedCommitment,
            Component::ReservedUsage,
            Component::Spot,
            Component::Package,
            Component::PackageUsage,
            Component::SlaCompensation,
            Component::SpotInterrupted,
            Component::Subscription,
            Component::Increment,
            Component::SubscriptionRefund,
            Component::Charge,
        ];
        if let Some(state) = s.strip_prefix("state:") {
            return LeaseState::parse(state).map(Component::State);
        }
        PLAIN.into_iter().find(|c| c.as_str() == s)
    }
}

impl PartialOrd for Component {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Component {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Serialize for Component {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Component {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Component::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown component {s:?}")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    UnitSeconds,
    Gb,
    /// A `package` line: quantity 1.
    Package,
    /// A `charge` line (section 20): quantity 1.
    Charge,
}

/// One invoice line. Field order is the JSON order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    pub component: Component,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    pub tier: usize,
    /// Only on `on_demand` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplier: Option<Decimal>,
    /// Only on `spot` lines (section 9): the rate per unit-hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Decimal>,
    /// Only on `package` and `package_usage` lines (section 12): the package's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Only on `subscription` lines (section 13): the subscription's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<String>,
    /// Only on `charge` lines (section 20): the charge's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charge: Option<String>,
    /// Only on `charge` lines (section 20): the charge's description, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub quantity: Decimal,
    pub unit: Unit,
    pub amount: Decimal,
    /// Only on `sla_compensation` lines (section 10): the amount credited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation: Option<Decimal>,
    /// Only on `subscription_refund` lines (section 17): the amount credited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund: Option<Decimal>,
    /// Orders lines whose visible keys are equal (two reservations of one sku): the
    /// reservation's position in the price book.
    #[serde(skip)]
    pub seq: usize,
}

impl Line {
    /// A usage line of `unit_seconds` for `sku`.
    pub fn usage(
        component: Component,
        sku: &str,
        tier: usize,
        unit_seconds: Decimal,
        amount: Decimal,
    ) -> Line {
        Line {
            component,
            sku: Some(sku.to_string()),
            dest: None,
            tier,
            multiplier: None,
            price: None,
            package: None,
            subscription: None,
            charge: None,
            description: None,
            quantity: show_quantity(unit_seconds),
            unit: Unit::UnitSeconds,
            amount: round_amount(amount),
            compensation: None,
            refund: None,
            seq: 0,
        }
    }

    /// What tells the line from the invoice's others (section 18's allocation finds a line's
    /// weights by it): every identifying field and the price book order of its term.
    pub fn identity(&self) -> LineId {
        (
            self.component,
            self.sku.clone(),
            self.dest.clone(),
            self.tier,
            self.multiplier,
            self.price,
            self.package.clone(),
            self.subscription.clone(),
            self.charge.clone(),
            self.seq,
        )
    }

    /// Sections 14 and 21: (component, sku or dest, tier, multiplier, price, package,
    /// subscription, charge), a missing field first, then the price book order of equal
    /// reservations.
    #[allow(clippy::type_complexity)]
    fn sort_key(
        &self,
    ) -> (
        Component,
        Option<&str>,
        usize,
        Option<Decimal>,
        Option<Decimal>,
        Option<&str>,
        Option<&str>,
        Option<&str>,
        usize,
    ) {
        let name = self.sku.as_deref().or(self.dest.as_deref());
        (
            self.component,
            name,
            self.tier,
            self.multiplier,
            self.price,
            self.package.as_deref(),
            self.subscription.as_deref(),
            self.charge.as_deref(),
            self.seq,
        )
    }
}

/// A line's identity ([`Line::identity`]): component, sku, dest, tier, multiplier, price,
/// package, subscription, charge, and the price book order of its term.
pub type LineId = (
    Component,
    Option<String>,
    Option<String>,
    usize,
    Option<Decimal>,
    Option<Decimal>,
    Option<String>,
    Option<String>,
    Option<String>,
    usize,
);

/// Section 18: one cell's part of an invoice line: the line's identifying fields and the
/// cell's amount (no quantity). Field order is the JSON order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatedLine {
    pub component: Component,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    pub tier: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplier: Option<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charge: Option<String>,
    pub amount: Decimal,
}

impl AllocatedLine {
    /// `line`'s identifying fields with `amount`.
    pub fn part_of(line: &Line, amount: Decimal) -> AllocatedLine {
        AllocatedLine {
            component: line.component,
            sku: line.sku.clone(),
            dest: line.dest.clone(),
            tier: line.tier,
            multiplier: line.multiplier,
            price: line.price,
            package: line.package.clone(),
            subscription: line.subscription.clone(),
            charge: line.charge.clone(),
            amount,
        }
    }
}

/// Section 18: one cell (member, tag value) of a payer invoice's allocation. Field order is
/// the JSON order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationRow {
    pub account: String,
    pub tag: String,
    pub lines: Vec<AllocatedLine>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub credit: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
}

/// An invoice for one account and period (section 6). Field order is the JSON order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invoice {
    pub account: String,
    /// Section 19: the invoice's region, `Some(None)` for home (shown as `null`). `None`
    /// (not shown) for invoices of a price book without part-3 features, so they stay
    /// byte-identical to what they were before part 3 ([`crate::choices`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "shown_region"
    )]
    pub region: Option<Option<String>>,
    pub currency: String,
    pub period: PeriodJson,
    pub lines: Vec<Line>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub credit: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
    /// Section 18: with the price book's `allocation_tag`, every amount split over the
    /// (member, tag value) cells, sorted by (account, tag). Not shown without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Vec<AllocationRow>>,
}

/// `"region": null` reads as a shown home region, a missing `region` as not shown.
fn shown_region<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// A discount that takes an amount off the lines it matches (section 16's scoped, dated or
/// capped discounts; the price book's `Discount` implements it).
pub trait LineDiscount {
    /// The amount taken off `lines` (already rounded to the cent).
    fn taken(&self, lines: &[Line]) -> Decimal;
}

/// The money terms applied after the lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Terms {
    /// Sum of the account's discount percents.
    pub discount_percent: Decimal,
    /// Credit still available to this invoice.
    pub credit_balance: Decimal,
    pub tax_rate: Decimal,
}

impl Invoice {
    /// Drops zero-quantity lines, sorts the rest and computes the totals in the order of
    /// section 5: subtotal, discount, credit, net, tax, total.
    pub fn assemble(
        account: &str,
        currency: &str,
        period: PeriodJson,
        lines: Vec<Line>,
        terms: Terms,
    ) -> Invoice {
        Invoice::assemble_with(account, currency, period, lines, terms, &[])
    }

    /// [`Invoice::assemble`] with the discounts of section 16 other than plain ones that
    /// apply to the period (`terms.discount_percent` is `P`, the plain ones' sum):
    /// `discount = round(subtotal x P / 100, 2) + Σ min(cap, round(B x percent / 100, 2))`,
    /// `B` the amounts of the lines a discount matches, at most `subtotal`.
    pub fn assemble_with(
        account: &str,
        currency: &str,
        period: PeriodJson,
        mut lines: Vec<Line>,
        terms: Terms,
        scoped: &[&dyn LineDiscount],
    ) -> Invoice {
        lines.retain(|l| !l.quantity.is_zero());
        lines.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        let subtotal = round_amount(lines.iter().map(|l| l.amount).sum());
        let plain = round_amount(subtotal * terms.discount_percent / Decimal::ONE_HUNDRED);
        let discount = round_amount(
            scoped
                .iter()
                .map(|d| d.taken(&lines))
                .fold(plain, |a, b| a + b)
                .min(subtotal),
        );
        let credit = round_amount(
            terms
                .credit_balance
                .min(subtotal - discount)
                .max(Decimal::ZERO),
        );
        let net = subtotal - discount - credit;
        let tax = round_amount(net * terms.tax_rate);
        let total = round_amount(net + tax);
        let invoice = Invoice {
            account: account.to_string(),
            region: None,
            currency: currency.to_string(),
            period,
            lines,
            subtotal,
            discount,
            credit,
            tax,
            total,
            allocation: None,
        };
        invoice.assert_adds_up();
        invoice
    }

    /// Money invariant, on in release: the lines add up to the subtotal and the totals follow.
    pub fn assert_adds_up(&self) {
        let sum: Decimal = self.lines.iter().map(|l| l.amount).sum();
        assert_eq!(
            sum, self.subtotal,
            "invoice lines do not add up to the subtotal"
        );
        assert_eq!(
            self.subtotal - self.discount - self.credit + self.tax,
            self.total,
            "invoice totals do not add up"
        );
        assert!(
            self.lines.iter().all(|l| l.amount.scale() == 2),
            "amount without 2 decimals"
        );
    }
}

/// An issued invoice's state (issue 12), as stored and shown: `issued`, `paid`, or `overdue`
/// (told on a clock by [`crate::finance::adjustment::status`], never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvoiceStatus {
    Issued,
    Paid,
    Overdue,
}

impl InvoiceStatus {
    /// Every status, in declaration order.
    pub const ALL: [InvoiceStatus; 3] = [
        InvoiceStatus::Issued,
        InvoiceStatus::Paid,
        InvoiceStatus::Overdue,
    ];

    /// A stored status (`issued`, `paid`, `overdue`); anything else is `None`, never a
    /// default: the caller names where the unknown value was found.
    pub fn parse(s: &str) -> Option<InvoiceStatus> {
        InvoiceStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The word stored in `invoices.status` and shown in the API: `issued`, `paid`, `overdue`.
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceStatus::Issued => "issued",
            InvoiceStatus::Paid => "paid",
            InvoiceStatus::Overdue => "overdue",
        }
    }
}

impl std::fmt::Display for InvoiceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An invoice's stored status (issue 12): `paid` once what is paid covers what it owes
/// (`paid >= amount_due`; an invoice owing 0.00 is paid at issue), else `issued`. Whether an
/// `issued` invoice is overdue depends on the clock ([`crate::finance::adjustment::status`]).
/// Used by the close (billing-store `close.rs`), the reads (`documents.rs`) and the money
/// verification (`verify_money.rs`).
pub fn status(amount_due: Decimal, paid: Decimal) -> InvoiceStatus {
    if paid >= amount_due {
        InvoiceStatus::Paid
    } else {
        InvoiceStatus::Issued
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn period() -> PeriodJson {
        PeriodJson {
            start: "a".into(),
            end: "b".into(),
        }
    }

    #[test]
    fn worked_1_beta_discount_credit_and_tax() {
        // Subtotal 60.70; 10% discount = 6.07; credit min(5.00, 54.63) = 5.00; net 49.63;
        // tax 6% = 2.9778 -> 2.98; total 52.61.
        let lines = vec![Line::usage(
            Component::Spot,
            "gpu",
            0,
            d("7200"),
            d("60.70"),
        )];
        let terms = Terms {
            discount_percent: d("10"),
            credit_balance: d("5.00"),
            tax_rate: d("0.06"),
        };
        let inv = Invoice::assemble("beta", "CNY", period(), lines, terms);
        let got: Vec<String> = [inv.subtotal, inv.discount, inv.credit, inv.tax, inv.total]
            .iter()
            .map(|x| x.to_string())
            .collect();
        assert_eq!(got, ["60.70", "6.07", "5.00", "2.98", "52.61"]);
    }

    #[test]
    fn credit_never_exceeds_what_is_owed() {
        let lines = vec![Line::usage(Component::Spot, "gpu", 0, d("1"), d("3.00"))];
        let terms = Terms {
            discount_percent: d("50"),
            credit_balance: d("500"),
            tax_rate: d("0.06"),
        };
        let inv = Invoice::assemble("a", "CNY", period(), lines, terms);
        assert_eq!(
            (inv.discount, inv.credit, inv.tax, inv.total),
            (d("1.50"), d("1.50"), d("0.00"), d("0.00"))
        );
    }

    #[test]
    fn zero_quantity_lines_are_left_out_and_lines_sort_by_component_name() {
        let lines = vec![
            Line::usage(Component::Spot, "a", 0, d("1"), d("1")),
            Line::usage(Component::Minimum, "a", 0, d("0"), d("0")),
            Line::usage(Component::Egress, "a", 0, d("2"), d("1")),
        ];
        let inv = Invoice::assemble("a", "CNY", period(), lines, Terms::default());
        let comps: Vec<Component> = inv.lines.iter().map(|l| l.component).collect();
        assert_eq!(comps, [Component::Egress, Component::Spot]);
        assert_eq!(inv.total.to_string(), "2.00");
    }

    #[test]
    fn part_3_components_round_trip_and_sort_by_name() {
        // Section 21: `charge` < `egress` < `increment` < `minimum` < ... <
        // `subscription` < `subscription_refund`, by name.
        for c in [
            Component::Increment,
            Component::SubscriptionRefund,
            Component::Charge,
        ] {
            assert_eq!(Component::parse(c.as_str()), Some(c));
        }
        assert!(Component::Charge < Component::Egress);
        assert!(Component::Increment < Component::Minimum);
        assert!(Component::Subscription < Component::SubscriptionRefund);
    }

    #[test]
    fn a_missing_charge_sorts_first_then_charges_by_id() {
        let mk = |charge: Option<&str>| {
            let mut l = Line::usage(Component::Charge, "x", 0, d("1"), d("1"));
            l.sku = None;
            l.charge = charge.map(str::to_string);
            l
        };
        let lines = vec![mk(Some("b")), mk(None), mk(Some("a"))];
        let inv = Invoice::assemble("a", "CNY", period(), lines, Terms::default());
        let got: Vec<Option<&str>> = inv.lines.iter().map(|l| l.charge.as_deref()).collect();
        assert_eq!(got, [None, Some("a"), Some("b")]);
    }

    #[test]
    fn status_is_paid_once_payments_cover_what_is_owed() {
        // Owing 52.61: 52.60 paid leaves a cent open (issued); 52.61 or more is paid; an
        // invoice owing 0.00 is paid at issue with nothing paid.
        assert_eq!(status(d("52.61"), d("52.60")), InvoiceStatus::Issued);
        assert_eq!(status(d("52.61"), d("52.61")), InvoiceStatus::Paid);
        assert_eq!(status(d("52.61"), d("60.00")), InvoiceStatus::Paid);
        assert_eq!(status(d("0.00"), d("0")), InvoiceStatus::Paid);
        assert_eq!(InvoiceStatus::Issued.as_str(), "issued");
        assert_eq!(InvoiceStatus::Paid.as_str(), "paid");
        assert_eq!(InvoiceStatus::Overdue.as_str(), "overdue");
    }
}
