//! Helpers for the core's integration tests: events as JSON lines, rating a set of them.
#![allow(dead_code)]

use billing_core::invoice::{Component, Invoice, Line};
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{Rated, rate_all};
use rust_decimal::Decimal;

/// Unix seconds as RFC 3339 (`2026-11-01T00:00:00Z`).
pub fn rfc(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

/// A `gpu.usage` event. Times are RFC 3339.
#[derive(Clone, Debug)]
pub struct U<'a> {
    pub id: &'a str,
    pub account: &'a str,
    pub lease: &'a str,
    pub resource: &'a str,
    pub sku: &'a str,
    pub class: &'a str,
    pub start: &'a str,
    pub end: &'a str,
    pub quantity: &'a str,
}

impl Default for U<'_> {
    fn default() -> Self {
        U {
            id: "e1",
            account: "acme",
            lease: "L1",
            resource: "gpu0",
            sku: "gpu.h100",
            class: "on_demand",
            start: "",
            end: "",
            quantity: "1",
        }
    }
}

impl U<'_> {
    pub fn json(&self) -> String {
        format!(
            r#"{{"specversion":"1.0","id":"{}","source":"node/1","type":"gpu.usage","subject":"{}","data":{{"lease":"{}","resource":"{}","sku":"{}","class":"{}","start":"{}","end":"{}","quantity":"{}"}}}}"#,
            self.id,
            self.account,
            self.lease,
            self.resource,
            self.sku,
            self.class,
            self.start,
            self.end,
            self.quantity
        )
    }
}

pub fn egress(id: &str, account: &str, dest: &str, time: &str, bytes: u64) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"gw/1","type":"net.egress","subject":"{account}","time":"{time}","data":{{"dest":"{dest}","bytes":{bytes}}}}}"#
    )
}

/// Meters the records (all must be accepted or duplicates) and rates the period.
pub fn rate(book: &str, period: &str, records: &[String]) -> Vec<Rated> {
    let book = PriceBook::from_toml(book).expect("valid price book");
    let period = Period::month(period, book.timezone).unwrap();
    let mut meter = Meter::new();
    for r in records {
        if let Admission::Rejected(why) = meter.ingest(r.as_bytes()) {
            panic!("rejected {r}: {why}");
        }
    }
    rate_all(&book, period, &meter, None).unwrap()
}

/// The invoice of `account`.
pub fn invoice<'a>(rated: &'a [Rated], account: &str) -> &'a Invoice {
    &rated
        .iter()
        .find(|r| r.invoice.account == account)
        .expect("account invoiced")
        .invoice
}

/// Lines of a component as (tier, multiplier, quantity, amount) strings.
pub fn lines(inv: &Invoice, c: Component) -> Vec<(usize, String, String, String)> {
    inv.lines
        .iter()
        .filter(|l| l.component == c)
        .map(|l: &Line| {
            (
                l.tier,
                l.multiplier
                    .map(|m| m.normalize().to_string())
                    .unwrap_or_default(),
                l.quantity.to_string(),
                l.amount.to_string(),
            )
        })
        .collect()
}

pub fn line(
    tier: usize,
    multiplier: &str,
    quantity: &str,
    amount: &str,
) -> (usize, String, String, String) {
    (tier, multiplier.into(), quantity.into(), amount.into())
}

// ---- part 2: the rental events -----------------------------------------------------------

/// `u` as reported by node `source` (section 10 matches faults on the usage's source).
pub fn usage_from(source: &str, u: &U<'_>) -> String {
    u.json().replacen(
        r#""source":"node/1""#,
        &format!(r#""source":"{source}""#),
        1,
    )
}

/// A `lease.state` event.
pub fn lease_state(id: &str, account: &str, lease: &str, state: &str, at: &str) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"ctl/1","type":"lease.state","subject":"{account}","data":{{"lease":"{lease}","state":"{state}","at":"{at}"}}}}"#
    )
}

/// A `spot.price` platform event (subject: the zone).
pub fn spot_price(id: &str, sku: &str, price: &str, from: &str) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"market/gz","type":"spot.price","subject":"gz-a","data":{{"sku":"{sku}","price_per_hour":"{price}","from":"{from}"}}}}"#
    )
}

/// A `node.fault` platform event.
pub fn node_fault(id: &str, node: &str, start: &str, end: &str) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"mon/gz","type":"node.fault","subject":"platform","data":{{"node":"{node}","start":"{start}","end":"{end}"}}}}"#
    )
}

/// A `net.counter` event.
pub fn net_counter(
    id: &str,
    account: &str,
    lease: &str,
    dest: &str,
    bytes_total: u64,
    at: &str,
) -> String {
    format!(
        r#"{{"specversion":"1.0","id":"{id}","source":"gw/1","type":"net.counter","subject":"{account}","data":{{"lease":"{lease}","interface":"eth0","dest":"{dest}","bytes_total":{bytes_total},"at":"{at}"}}}}"#
    )
}

/// Meters the records (all must be accepted or duplicates).
pub fn meter(records: &[String]) -> Meter {
    let mut meter = Meter::new();
    for r in records {
        if let Admission::Rejected(why) = meter.ingest(r.as_bytes()) {
            panic!("rejected {r}: {why}");
        }
    }
    meter
}

/// Lines of a component as (sku, extra, quantity, amount) strings; `extra` is the line's
/// price, package, subscription or compensation, whichever it has.
pub fn lines2(inv: &Invoice, c: Component) -> Vec<(String, String, String, String)> {
    inv.lines
        .iter()
        .filter(|l| l.component == c)
        .map(|l| {
            let extra = l
                .price
                .map(|p| p.to_string())
                .or(l.package.clone())
                .or(l.subscription.clone())
                .or(l.compensation.map(|c| c.to_string()))
                .unwrap_or_default();
            (
                l.sku.clone().unwrap_or_default(),
                extra,
                l.quantity.to_string(),
                l.amount.to_string(),
            )
        })
        .collect()
}

pub fn l2(
    sku: &str,
    extra: &str,
    quantity: &str,
    amount: &str,
) -> (String, String, String, String) {
    (sku.into(), extra.into(), quantity.into(), amount.into())
}

/// The totals (subtotal, discount, credit, tax, total) as strings.
pub fn totals(inv: &Invoice) -> [String; 5] {
    [inv.subtotal, inv.discount, inv.credit, inv.tax, inv.total].map(|x| x.to_string())
}
