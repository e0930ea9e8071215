//! Issue 26: what a lease would cost, before it runs (`POST /v1/estimate`).
//!
//! The lease becomes `gpu.usage` events in a fresh [`Meter`] (one usage run from `start` to
//! `start + duration`, cut into events of at most [`MAX_INTERVAL_SECONDS`] that fold back into
//! one run), rated by [`rate_month`] for every period the lease touches: every rule (tiers,
//! off-peak windows, increments, minimums, reservations, packages, discounts, tax) applies
//! exactly as for real usage. The basis ([`BASIS`], and [`crate::choices`]): as if the lease
//! were the account's only usage in its periods, with the account's reservations, packages,
//! subscriptions and discounts; credits are not applied, and the lines that do not come from
//! the lease (commitments, package prices, subscription cycles and refunds, charges, egress,
//! SLA compensation) are left out before the totals. Spot usage is priced at the sku's
//! `spot_rate_per_hour` (a fresh meter has no spot curve). Pure: nothing is written.

use crate::common::limits::{
    MAX_EVENT_SECS, MAX_INTERVAL_SECONDS, MAX_QUANTITY, MAX_STRING_BYTES, MIN_EVENT_SECS,
};
use crate::common::timestamp::Timestamp;
use crate::events::event_fields::Class;
use crate::ledger::meter::{Admission, Meter};
use crate::pricing::invoice::{Component, Invoice, Line, LineDiscount, Terms};
use crate::pricing::period::{Period, PeriodJson};
use crate::pricing::pricebook::PriceBook;
use crate::pricing::rating::rate_month;
use rust_decimal::Decimal;
use serde::Serialize;

/// The longest lease an estimate prices: 31 days.
pub const MAX_ESTIMATE_SECONDS: i64 = 31 * 86_400;

/// The rule an estimate follows, as the response's `basis` says it.
pub const BASIS: &str = "As if this lease were the account's only usage in the billing periods it touches: tiers start from zero, the account's reservations, packages, subscriptions, discounts and the tax apply, credits are not applied, and lines not from the lease (commitments, package and subscription prices, charges) are left out.";

/// A lease to price. `start` is RFC 3339 text, validated here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub sku: String,
    pub quantity: Decimal,
    pub class: Class,
    /// `None`: the home region.
    pub region: Option<String>,
    pub start: String,
    pub duration_seconds: i64,
}

/// What an estimate refuses; [`EstimateError::field`] names the request field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    #[error("account: {0}")]
    Account(String),
    #[error("sku: {0}")]
    Sku(String),
    #[error("quantity: {0}")]
    Quantity(String),
    #[error("class: {0}")]
    Class(String),
    #[error("region: {0}")]
    Region(String),
    #[error("start: {0}")]
    Start(String),
    #[error("duration_seconds: {0}")]
    Duration(String),
}

impl EstimateError {
    /// The request field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            EstimateError::Account(_) => "account",
            EstimateError::Sku(_) => "sku",
            EstimateError::Quantity(_) => "quantity",
            EstimateError::Class(_) => "class",
            EstimateError::Region(_) => "region",
            EstimateError::Start(_) => "start",
            EstimateError::Duration(_) => "duration_seconds",
        }
    }
}

/// The lease's part of one period's invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EstimatePeriod {
    pub period: PeriodJson,
    pub lines: Vec<Line>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
}

/// What the lease would cost: per period, and summed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Estimate {
    pub account: String,
    pub sku: String,
    pub class: Class,
    pub quantity: Decimal,
    pub region: Option<String>,
    pub start: String,
    pub end: String,
    pub currency: String,
    pub periods: Vec<EstimatePeriod>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
    pub basis: &'static str,
}

/// Whether a line bills the lease's own usage (kept) rather than the account's terms.
fn from_the_lease(line: &Line, sku: &str) -> bool {
    let usage = matches!(
        line.component,
        Component::OnDemand
            | Component::ReservedUsage
            | Component::Spot
            | Component::PackageUsage
            | Component::SpotInterrupted
            | Component::State(_)
            | Component::Minimum
            | Component::Increment
    );
    usage && line.sku.as_deref() == Some(sku)
}

/// Checks what does not need a price book (duration, quantity, start) and returns the
/// lease's (start, end) instants; the API calls it before loading the book.
pub fn check_lease(lease: &Lease) -> Result<(Timestamp, Timestamp), EstimateError> {
    if !(1..=MAX_ESTIMATE_SECONDS).contains(&lease.duration_seconds) {
        return Err(EstimateError::Duration(format!(
            "must be 1 to {MAX_ESTIMATE_SECONDS} seconds (31 days), not {}",
            lease.duration_seconds
        )));
    }
    if lease.quantity <= Decimal::ZERO || lease.quantity > MAX_QUANTITY {
        return Err(EstimateError::Quantity(format!(
            "must be more than 0 and at most {MAX_QUANTITY}"
        )));
    }
    let start = Timestamp::parse_rfc3339(&lease.start)
        .ok_or_else(|| EstimateError::Start("not an RFC 3339 instant".into()))?;
    let end = Timestamp {
        secs: start.secs.saturating_add(lease.duration_seconds),
        nanos: start.nanos,
    };
    if start.secs < MIN_EVENT_SECS || end.ceil_secs() > MAX_EVENT_SECS {
        return Err(EstimateError::Start(
            "the lease must lie in 2000-01-01T00:00:00Z ..= 2100-01-01T00:00:00Z".into(),
        ));
    }
    Ok((start, end))
}

/// [`check_lease`], then the lease against `book`: a known region, sku and class price.
fn validate(book: &PriceBook, lease: &Lease) -> Result<(Timestamp, Timestamp), EstimateError> {
    let (start, end) = check_lease(lease)?;
    let region = lease.region.as_deref().filter(|r| !r.is_empty());
    let Some(rbook) = book.for_region(region) else {
        return Err(EstimateError::Region(format!(
            "{:?} is not a region of the price book",
            region.unwrap_or_default()
        )));
    };
    if lease.sku.is_empty() || lease.sku.len() > MAX_STRING_BYTES {
        return Err(EstimateError::Sku(format!(
            "must be 1 to {MAX_STRING_BYTES} bytes"
        )));
    }
    let Some(sku) = rbook.skus.get(&lease.sku) else {
        return Err(EstimateError::Sku(format!(
            "{:?} is not in the price book{}",
            lease.sku,
            region
                .map(|r| format!(" for region {r:?}"))
                .unwrap_or_default()
        )));
    };
    let priced = match lease.class {
        Class::OnDemand => sku.on_demand_tiers().is_some(),
        Class::Spot => sku.spot_rate_per_hour.is_some(),
    };
    if !priced {
        return Err(EstimateError::Class(format!(
            "sku {:?} has no {} price",
            lease.sku,
            lease.class.as_str()
        )));
    }
    Ok((start, end))
}

/// The lease as `gpu.usage` records of at most [`MAX_INTERVAL_SECONDS`] each.
fn usage_records(account: &str, lease: &Lease, start: Timestamp, end: Timestamp) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut from = start;
    while from < end {
        let to = Timestamp {
            secs: from.secs.saturating_add(MAX_INTERVAL_SECONDS),
            nanos: from.nanos,
        }
        .min(end);
        let mut data = serde_json::json!({
            "lease": "estimate",
            "resource": "estimate",
            "sku": lease.sku,
            "class": lease.class.as_str(),
            "start": from.to_string(),
            "end": to.to_string(),
            "quantity": lease.quantity.normalize().to_string(),
        });
        if let (Some(r), Some(map)) = (
            lease.region.as_deref().filter(|r| !r.is_empty()),
            data.as_object_mut(),
        ) {
            map.insert("region".into(), serde_json::Value::from(r));
        }
        let record = serde_json::json!({
            "specversion": "1.0",
            "id": format!("estimate-{}", out.len()),
            "source": "gpubill/estimate",
            "type": "gpu.usage",
            "subject": account,
            "data": data,
        });
        out.push(record.to_string().into_bytes());
        from = to;
    }
    out
}

/// The request field a refused synthetic event points at.
fn refused(r: crate::events::reject::Rejection) -> EstimateError {
    use crate::events::reject::RejectReason as R;
    let why = format!("{}: {}", r.reason.as_str(), r.detail);
    match r.reason {
        R::BadSubject | R::MissingSubject => EstimateError::Account(why),
        R::BadQuantity => EstimateError::Quantity(why),
        R::StringTooLong | R::ControlCharacter | R::MissingField => EstimateError::Sku(why),
        _ => EstimateError::Start(why),
    }
}

/// What `lease` would cost `account` under `book` (see the module and [`BASIS`]).
pub fn estimate(book: &PriceBook, account: &str, lease: &Lease) -> Result<Estimate, EstimateError> {
    let (start, end) = validate(book, lease)?;
    let region = lease.region.as_deref().filter(|r| !r.is_empty());
    let rbook = book
        .for_region(region)
        .ok_or_else(|| EstimateError::Region("not a region of the price book".into()))?;
    let mut meter = Meter::new();
    for record in usage_records(account, lease, start, end) {
        match meter.ingest(&record) {
            Admission::Accepted | Admission::Duplicate => {}
            Admission::Rejected(r) => return Err(refused(r)),
        }
    }
    let tz = book.account_timezone(account).unwrap_or(rbook.timezone);
    let mut periods = Vec::new();
    let mut at = start.floor_secs();
    let last = end.ceil_secs();
    while at < last {
        let period = Period::containing(at, tz)
            .ok_or_else(|| EstimateError::Start("outside the supported periods".into()))?;
        let month = rate_month(book, &period.label, &meter, Some(account))
            .map_err(|e| EstimateError::Quantity(e.to_string()))?;
        let rated = month.rated.into_iter().find(|r| match &r.invoice.region {
            None => region.is_none(),
            Some(shown) => shown.as_deref() == region,
        });
        if let Some(rated) = rated {
            if let Some(u) = rated
                .unpriced
                .iter()
                .find(|u| u.sku.as_deref() == Some(&lease.sku))
            {
                return Err(EstimateError::Sku(format!("cannot be priced: {}", u.why)));
            }
            let lines: Vec<Line> = rated
                .invoice
                .lines
                .into_iter()
                .filter(|l| from_the_lease(l, &lease.sku))
                .collect();
            if !lines.is_empty() {
                periods.push(assemble(&rbook, account, &period, lines));
            }
        }
        if period.end <= at {
            break;
        }
        at = period.end;
    }
    let sum = |f: fn(&EstimatePeriod) -> Decimal| periods.iter().map(f).sum::<Decimal>();
    Ok(Estimate {
        account: account.to_string(),
        sku: lease.sku.clone(),
        class: lease.class,
        quantity: lease.quantity.normalize(),
        region: region.map(str::to_string),
        start: start.to_string(),
        end: end.to_string(),
        currency: rbook.currency.clone(),
        subtotal: sum(|p| p.subtotal),
        discount: sum(|p| p.discount),
        tax: sum(|p| p.tax),
        total: sum(|p| p.total),
        periods,
        basis: BASIS,
    })
}

/// The lease's lines of one period with the account's discounts and the tax, no credit.
fn assemble(rbook: &PriceBook, account: &str, period: &Period, lines: Vec<Line>) -> EstimatePeriod {
    let terms = Terms {
        discount_percent: rbook.discount_percent(account),
        credit_balance: Decimal::ZERO,
        tax_rate: rbook.tax_rate,
    };
    let scoped: Vec<&dyn LineDiscount> = rbook
        .scoped_discounts(account, period.start, period.end)
        .into_iter()
        .map(|d| d as &dyn LineDiscount)
        .collect();
    let invoice = Invoice::assemble_with(
        account,
        &rbook.currency,
        period.to_json(),
        lines,
        terms,
        &scoped,
    );
    EstimatePeriod {
        period: invoice.period,
        lines: invoice.lines,
        subtotal: invoice.subtotal,
        discount: invoice.discount,
        tax: invoice.tax,
        total: invoice.total,
    }
}

#[cfg(test)]
mod tests;
