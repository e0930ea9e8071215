//! Account terms: reservations, discounts, credits (sections 3 and 12), packages (12),
//! subscriptions (13, 17), one-off charges (20) and the SLA terms (10): what each is. Their
//! parsing is `terms_parse.rs`.

use crate::common::limits::DEFAULT_ATTACH_SECONDS;
use crate::common::money::round_amount;
use crate::pricing::invoice::{Component, Line, LineDiscount, Unit};
use rust_decimal::Decimal;

/// A prepaid package of unit-hours of one sku (section 12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Position in the price book's `[[packages]]`.
    pub index: usize,
    pub account: String,
    pub id: String,
    pub sku: String,
    /// `hours x 3600`: the balance at `from`.
    pub unit_seconds: Decimal,
    /// Usable for seconds in `[from, to)`.
    pub from: i64,
    pub to: i64,
    /// Billed once, in the period holding `from`.
    pub price: Decimal,
    /// Section 19: the region it applies in (`None`: home).
    pub region: Option<String>,
}

/// `week` (7 x 86,400 s), `month` or `year` (calendar, in the timezone of the
/// subscription's region).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cycle {
    Week,
    Month,
    /// Section 17.
    Year,
}

/// What ending a subscription inside a cycle gives back (section 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Refund {
    #[default]
    None,
    /// The unused part of the cycle `end` falls in, pro rata, credited.
    Prorata,
}

/// A subscription (section 13): `cycles` cycles of `quantity` reserved units from `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub index: usize,
    pub account: String,
    pub id: String,
    pub sku: String,
    pub quantity: Decimal,
    pub cycle: Cycle,
    pub start: i64,
    /// With `auto_renew`, the cycles that start before
    /// [`AUTO_RENEW_HORIZON`] (after every instant gpubill
    /// reads), so the cycles go on for as long as anything can be rated.
    pub cycles: u32,
    /// Per cycle.
    pub price: Decimal,
    /// Section 17: the cycles go on without a count.
    pub auto_renew: bool,
    /// Section 17: no cycle starts at or after `end`; counts in `R(s)` only for `s < end`.
    pub end: Option<i64>,
    pub refund: Refund,
    /// Section 19: the region it applies in (`None`: home).
    pub region: Option<String>,
}

/// A credit (sections 3 and 12): applies to periods overlapping `[from, to)`, an absent
/// side open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    /// Position in the price book's `[[credits]]` (ties and open credits draw in this order).
    pub index: usize,
    pub account: String,
    pub id: Option<String>,
    pub amount: Decimal,
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// Section 19: the region whose invoices it applies to (`None`: home).
    pub region: Option<String>,
}

impl Credit {
    /// Whether the credit applies to the period `[start, end)`.
    pub fn applies_to(&self, start: i64, end: i64) -> bool {
        self.from.is_none_or(|f| f < end) && self.to.is_none_or(|t| t > start)
    }
}

/// A discount (sections 5 and 16). A discount with none of `skus`, `components`, `from`,
/// `to`, `cap` and `region` is *plain*: its percent joins `P`, taken off the whole subtotal.
/// Any other takes `min(cap, round(B x percent / 100, 2))` off the invoice of a period that
/// overlaps `[from, to)`, `B` the sum of the amounts of the lines it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discount {
    /// Position in the price book's `[[discounts]]`.
    pub index: usize,
    pub account: String,
    pub id: Option<String>,
    /// 0 to 100.
    pub percent: Decimal,
    /// Only lines of these skus (a line without `sku` matches only discounts without `skus`).
    pub skus: Option<Vec<String>>,
    /// Only lines of these components.
    pub components: Option<Vec<Component>>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// The most it takes off one invoice.
    pub cap: Option<Decimal>,
    /// Section 19: the region it applies in (`None`: home; a plain discount applies in every
    /// region).
    pub region: Option<String>,
}

impl Discount {
    /// Section 16: none of `skus`, `components`, `from`, `to`, `cap` and `region`.
    pub fn is_plain(&self) -> bool {
        self.skus.is_none()
            && self.components.is_none()
            && self.from.is_none()
            && self.to.is_none()
            && self.cap.is_none()
            && self.region.is_none()
    }

    /// Whether it applies to the invoice of the period `[start, end)`: the period overlaps
    /// `[from, to)`, a missing side open (as credits, section 12).
    pub fn applies_to(&self, start: i64, end: i64) -> bool {
        self.from.is_none_or(|f| f < end) && self.to.is_none_or(|t| t > start)
    }

    /// Whether it matches `line`: its sku among `skus` (a line without one only when the
    /// discount has no `skus`) and its component among `components`.
    pub fn matches(&self, line: &Line) -> bool {
        let sku_ok = match (&self.skus, &line.sku) {
            (None, _) => true,
            (Some(skus), Some(sku)) => skus.iter().any(|s| s == sku),
            (Some(_), None) => false,
        };
        sku_ok
            && self
                .components
                .as_ref()
                .is_none_or(|cs| cs.contains(&line.component))
    }
}

/// A one-off charge (section 20): billed once, as a `charge` line of the period holding `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// Position in the price book's `[[charges]]`.
    pub index: usize,
    pub account: String,
    pub id: String,
    pub description: Option<String>,
    /// Positive, at most 2 decimals.
    pub amount: Decimal,
    /// Floored to the second.
    pub at: i64,
    /// Section 19: the region it is billed in (`None`: home).
    pub region: Option<String>,
}

/// `[sla]` (section 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sla {
    /// No default: without it there is no compensation.
    pub compensation_multiplier: Option<Decimal>,
    pub attach_seconds: i64,
}

impl Default for Sla {
    fn default() -> Self {
        Sla {
            compensation_multiplier: None,
            attach_seconds: DEFAULT_ATTACH_SECONDS,
        }
    }
}

/// Auto-renewing subscriptions have the cycles that start before this instant: 400 days
/// after the last instant gpubill reads (2100-01-01T00:00:00Z), so every period that can hold
/// an event is covered, in any timezone.
pub const AUTO_RENEW_HORIZON: i64 = crate::common::limits::MAX_EVENT_SECS + 400 * 86_400;

/// The number of cycles of an auto-renewing subscription: at least those starting before
/// [`AUTO_RENEW_HORIZON`] (a month has at least 28 days, a year 365, in any timezone).
pub fn auto_renew_cycles(cycle: Cycle, start: i64) -> u32 {
    let left = (AUTO_RENEW_HORIZON - start).max(0);
    let shortest = match cycle {
        Cycle::Week => 7 * 86_400,
        Cycle::Month => 28 * 86_400,
        Cycle::Year => 365 * 86_400,
    };
    u32::try_from(left / shortest + 1).unwrap_or(u32::MAX)
}

/// What a discount other than a plain one takes off: `min(cap, round(B x percent / 100, 2))`,
/// `B` the sum of the amounts of the lines it matches (section 16).
impl LineDiscount for Discount {
    fn taken(&self, lines: &[Line]) -> Decimal {
        let matched: Decimal = lines
            .iter()
            .filter(|l| self.matches(l))
            .map(|l| l.amount)
            .sum();
        let taken = round_amount(matched * self.percent / Decimal::ONE_HUNDRED);
        match self.cap {
            Some(cap) => taken.min(round_amount(cap)),
            None => taken,
        }
    }
}

impl Charge {
    /// Section 20: the `charge` line of a one-off charge (quantity 1, unit `charge`, no sku).
    pub fn line(&self) -> Line {
        Line {
            component: Component::Charge,
            sku: None,
            dest: None,
            tier: 0,
            multiplier: None,
            price: None,
            package: None,
            subscription: None,
            charge: Some(self.id.clone()),
            description: self.description.clone(),
            quantity: Decimal::ONE,
            unit: Unit::Charge,
            amount: round_amount(self.amount),
            compensation: None,
            refund: None,
            seq: self.index,
        }
    }
}
