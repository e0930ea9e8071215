//! GPU rental economics (part 2, sections 8 to 11): the rental events and what each does.
//! This module validates the rental events' data; [`lease`] keeps lease timelines and
//! [`platform`] spot curves and node faults; the rules of rating that read them are
//! [`states`] (lease states, section 8), [`sla`] (SLA compensation from node faults, section
//! 10) and [`counters`] (egress from interface counters, section 11). Spot usage (sections 4.5
//! and 9) is priced by [`crate::pricing::spot`].
//!
//! # The rental events
//!
//! The rental events of part 2: `lease.state` (section 8), `spot.price` (9), `node.fault`
//! (10) and `net.counter` (11). Decoded by [`crate::events::event::decode_any`] with the identity,
//! dedupe, subject and time-range rules of section 1; this module validates their `data`.
//!
//! Choices (also in [`crate::choices`]):
//! - Every instant is required, RFC 3339, within 2000..=2100 (`time_out_of_range`).
//!   `time` stays optional for all four types: each carries its own instant in `data`.
//! - `spot.price` and `node.fault` are platform events: their `subject` names a zone or
//!   `platform` and follows the account-id grammar (`bad_subject` otherwise), but names no
//!   account and gets no invoice. The zone does not scope the curve or the fault: section 9
//!   keys a curve by sku, section 10 a fault by node.
//! - `price_per_hour` is a decimal string of the one grammar ([`crate::common::decimal`]) or a JSON
//!   integer, `0 ..= MAX_RATE`; a JSON float, a negative or larger value is `bad_price`.
//! - `bytes_total` is a non-negative JSON integer (`bad_bytes` otherwise, like `bytes`).
//! - A fault with `end <= start` is `empty_interval`; its length is not limited beyond the
//!   time range (a node may stay down for days).
//! - Instants keep their nanoseconds in the fingerprint (content) and are floored (`at`,
//!   `from`, `start`) or ceiled (`end`) to whole seconds when metered.

pub mod counters;
pub mod lease;
pub mod platform;
pub mod sla;
pub mod states;
pub mod tags;

use crate::common::limits::MAX_RATE;
use crate::common::timestamp::Timestamp;
use crate::events::event_fields::{Canon, Check, bytes, reject, required_str, required_time};
use crate::events::json::{DataMembers, Scalar};
use crate::events::reject::RejectReason;
use crate::rental::lease::LeaseState;
use rust_decimal::Decimal;
use std::borrow::Cow;

/// The data of a rental event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RentalData<'a> {
    LeaseState(LeaseStateData<'a>),
    SpotPrice(SpotPrice<'a>),
    NodeFault(NodeFault<'a>),
    NetCounter(NetCounter<'a>),
    /// Section 18: `lease.tags`.
    LeaseTags(LeaseTagsData<'a>),
}

/// `lease.state`: the lease entered `state` at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseStateData<'a> {
    pub lease: Cow<'a, str>,
    pub state: LeaseState,
    pub at: Timestamp,
}

/// `spot.price`: from `from` on, spot usage of `sku` costs `price_per_hour` per unit-hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpotPrice<'a> {
    pub sku: Cow<'a, str>,
    pub price_per_hour: Decimal,
    pub from: Timestamp,
    /// Section 19: the region whose curve it is (`None`: home).
    pub region: Option<Cow<'a, str>>,
}

/// `node.fault`: node `node` (the `source` of its heartbeats) was down over `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFault<'a> {
    pub node: Cow<'a, str>,
    pub start: Timestamp,
    pub end: Timestamp,
}

/// `net.counter`: the cumulative byte counter of a lease's interface towards `dest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetCounter<'a> {
    pub lease: Cow<'a, str>,
    pub interface: Cow<'a, str>,
    pub dest: Cow<'a, str>,
    pub bytes_total: u64,
    pub at: Timestamp,
    /// Section 19: the region of the counter series (`None`: home).
    pub region: Option<Cow<'a, str>>,
}

impl RentalData<'_> {
    pub fn data_type(&self) -> &'static str {
        match self {
            RentalData::LeaseState(_) => "lease.state",
            RentalData::SpotPrice(_) => "spot.price",
            RentalData::NodeFault(_) => "node.fault",
            RentalData::NetCounter(_) => "net.counter",
            RentalData::LeaseTags(_) => "lease.tags",
        }
    }

    /// `spot.price` and `node.fault` apply to every account and name none.
    pub fn is_platform(&self) -> bool {
        matches!(self, RentalData::SpotPrice(_) | RentalData::NodeFault(_))
    }

    /// The last whole second the event speaks of.
    pub fn end_secs(&self) -> i64 {
        match self {
            RentalData::LeaseState(x) => x.at.ceil_secs(),
            RentalData::SpotPrice(x) => x.from.ceil_secs(),
            RentalData::NodeFault(x) => x.end.ceil_secs(),
            RentalData::NetCounter(x) => x.at.ceil_secs(),
            RentalData::LeaseTags(x) => x.at.ceil_secs(),
        }
    }

    /// Canonical bytes of the meaning (see [`crate::events::event::Event::fingerprint`]).
    pub(crate) fn canon(&self, w: &mut Canon<'_>) {
        match self {
            RentalData::LeaseState(x) => {
                w.put(b"S");
                w.str(&x.lease);
                w.put(&[x.state as u8]);
                w.time(x.at);
            }
            RentalData::SpotPrice(x) => {
                w.put(b"P");
                w.str(&x.sku);
                w.put(&x.price_per_hour.normalize().serialize());
                w.time(x.from);
                w.region(x.region.as_deref());
            }
            RentalData::NodeFault(x) => {
                w.put(b"F");
                w.str(&x.node);
                w.time(x.start);
                w.time(x.end);
            }
            RentalData::NetCounter(x) => {
                w.put(b"C");
                w.str(&x.lease);
                w.str(&x.interface);
                w.str(&x.dest);
                w.put(&x.bytes_total.to_le_bytes());
                w.time(x.at);
                w.region(x.region.as_deref());
            }
            RentalData::LeaseTags(x) => x.canon(w),
        }
    }

    pub fn into_owned(self) -> RentalData<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        match self {
            RentalData::LeaseState(x) => RentalData::LeaseState(LeaseStateData {
                lease: own(x.lease),
                state: x.state,
                at: x.at,
            }),
            RentalData::SpotPrice(x) => RentalData::SpotPrice(SpotPrice {
                sku: own(x.sku),
                price_per_hour: x.price_per_hour,
                from: x.from,
                region: x.region.map(own),
            }),
            RentalData::NodeFault(x) => RentalData::NodeFault(NodeFault {
                node: own(x.node),
                start: x.start,
                end: x.end,
            }),
            RentalData::NetCounter(x) => RentalData::NetCounter(NetCounter {
                lease: own(x.lease),
                interface: own(x.interface),
                dest: own(x.dest),
                bytes_total: x.bytes_total,
                at: x.at,
                region: x.region.map(own),
            }),
            RentalData::LeaseTags(x) => RentalData::LeaseTags(x.into_owned()),
        }
    }
}

/// Validates the `data` of a rental event of type `kind`.
pub(crate) fn rental_data<'a>(kind: &str, fields: DataMembers<'a>) -> Check<RentalData<'a>> {
    let [
        lease,
        _resource,
        sku,
        _class,
        start,
        end,
        _quantity,
        dest,
        _bytes,
        state,
        at,
        price,
        from,
        node,
        interface,
        bytes_total,
        region,
        _tags,
    ] = fields;
    let region = crate::events::event_fields::optional_str(region, "data.region")?;
    let field = RejectReason::MissingField;
    Ok(match kind {
        "lease.state" => RentalData::LeaseState(LeaseStateData {
            lease: required_str(lease, "data.lease", field)?,
            state: lease_state(state)?,
            at: required_time(at, "data.at")?,
        }),
        "spot.price" => RentalData::SpotPrice(SpotPrice {
            sku: required_str(sku, "data.sku", field)?,
            price_per_hour: price_per_hour(price)?,
            from: required_time(from, "data.from")?,
            region,
        }),
        "node.fault" => {
            let node = required_str(node, "data.node", field)?;
            let start = required_time(start, "data.start")?;
            let end = required_time(end, "data.end")?;
            if end.nanos_since(start) <= 0 {
                return reject(
                    RejectReason::EmptyInterval,
                    format!("data.end {end} is not after data.start {start}"),
                );
            }
            RentalData::NodeFault(NodeFault { node, start, end })
        }
        "net.counter" => RentalData::NetCounter(NetCounter {
            lease: required_str(lease, "data.lease", field)?,
            interface: required_str(interface, "data.interface", field)?,
            dest: required_str(dest, "data.dest", field)?,
            bytes_total: bytes(bytes_total, "data.bytes_total")?,
            at: required_time(at, "data.at")?,
            region,
        }),
        other => unreachable!("rental_data called for type {other:?}"),
    })
}

/// `lease.tags` (section 18): from `at` on, the lease's tags are `tags` (sorted by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseTagsData<'a> {
    pub lease: Cow<'a, str>,
    /// (name, value), sorted by name, names unique; an empty value is `""`.
    pub tags: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub at: Timestamp,
}

impl LeaseTagsData<'_> {
    /// Canonical bytes of the meaning (tags in name order, whatever the record's order).
    pub(crate) fn canon(&self, w: &mut Canon<'_>) {
        w.put(b"T");
        w.str(&self.lease);
        w.put(&(self.tags.len() as u64).to_le_bytes());
        for (name, value) in &self.tags {
            w.str(name);
            w.str(value);
        }
        w.time(self.at);
    }

    pub fn into_owned(self) -> LeaseTagsData<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        LeaseTagsData {
            lease: own(self.lease),
            tags: self
                .tags
                .into_iter()
                .map(|(k, v)| (own(k), own(v)))
                .collect(),
            at: self.at,
        }
    }
}

/// Validates the `data` of a `lease.tags` (section 18): `lease` and `at` as `lease.state`'s;
/// `tags` an object whose members are strings (each at most 256 bytes, no control character,
/// a name not empty and not repeated). Errors name the field: `missing_field` for a missing
/// `tags`, `wrong_type` for one that is not an object or a member that is not a string,
/// `malformed_json` for a repeated name.
pub(crate) fn lease_tags_data(fields: DataMembers<'_>) -> Check<LeaseTagsData<'_>> {
    let [lease, .., at, _, _, _, _, _, _, tags] = fields;
    let field = RejectReason::MissingField;
    let lease = required_str(lease, "data.lease", field)?;
    let at = required_time(at, "data.at")?;
    let members = match tags {
        Scalar::Absent | Scalar::Null => return reject(field, "data.tags is missing"),
        Scalar::Members(m) => m,
        _ => {
            return reject(
                RejectReason::WrongType,
                "data.tags must be an object of strings",
            );
        }
    };
    let mut tags = Vec::with_capacity(members.len());
    for (name, value) in members {
        let shown: String = name.escape_debug().take(60).collect();
        let Some(name) = crate::events::event_fields::optional_str(
            Scalar::Str(name),
            &format!("data.tags name \"{shown}\""),
        )?
        else {
            return reject(
                RejectReason::WrongType,
                "data.tags has a member with an empty name",
            );
        };
        let where_ = format!("data.tags.{shown}");
        let value = match value {
            Scalar::Str(_) => crate::events::event_fields::optional_str(value, &where_)?
                .unwrap_or(Cow::Borrowed("")),
            _ => {
                return reject(
                    RejectReason::WrongType,
                    format!("{where_} must be a string"),
                );
            }
        };
        tags.push((name, value));
    }
    tags.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = tags.windows(2).find(|w| w[0].0 == w[1].0) {
        let shown: String = w[0].0.escape_debug().take(60).collect();
        return reject(
            RejectReason::MalformedJson,
            format!("data.tags repeats the member \"{shown}\""),
        );
    }
    Ok(LeaseTagsData { lease, tags, at })
}

fn lease_state(v: Scalar<'_>) -> Check<LeaseState> {
    let s = match crate::events::event_fields::optional_str(v, "data.state") {
        Ok(Some(s)) => s,
        Ok(None) => return reject(RejectReason::MissingField, "data.state is missing"),
        Err(e) if e.reason == RejectReason::WrongType => {
            return reject(RejectReason::BadState, "data.state must be a string");
        }
        Err(e) => return Err(e),
    };
    LeaseState::parse(&s).map_or_else(
        || {
            let shown: String = s.chars().take(40).collect();
            let names: Vec<&str> = LeaseState::ALL.iter().map(|s| s.as_str()).collect();
            reject(
                RejectReason::BadState,
                format!("data.state {shown:?} is not one of {}", names.join(", ")),
            )
        },
        Ok,
    )
}

fn price_per_hour(v: Scalar<'_>) -> Check<Decimal> {
    let p = match v {
        Scalar::Absent | Scalar::Null => {
            return reject(RejectReason::MissingField, "data.price_per_hour is missing");
        }
        Scalar::Str(s) => match crate::common::decimal::parse(&s) {
            Ok(p) => p,
            Err(e) => {
                let shown: String = s.chars().take(40).collect();
                return reject(
                    RejectReason::BadPrice,
                    format!("data.price_per_hour {shown:?} {e}"),
                );
            }
        },
        Scalar::UInt(n) => Decimal::from(n),
        Scalar::NegInt(n) => Decimal::from(n),
        _ => {
            return reject(
                RejectReason::BadPrice,
                "data.price_per_hour must be a decimal string such as \"3.20\"",
            );
        }
    };
    if p < Decimal::ZERO || p > MAX_RATE {
        return reject(
            RejectReason::BadPrice,
            format!("data.price_per_hour {p} is outside [0, {MAX_RATE}]"),
        );
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use crate::events::event::{AnyData, RejectReason, decode, decode_any};
    use crate::rental::RentalData;

    const STATE: &str = r#"{"specversion":"1.0","id":"s-1","source":"ctl/1","type":"lease.state","subject":"acme","data":{"lease":"l-9","state":"stopped","at":"2026-11-03T10:00:00.5Z"}}"#;
    const PRICE: &str = r#"{"specversion":"1.0","id":"p-1","source":"mkt","type":"spot.price","subject":"gz-a","data":{"sku":"gpu.h100","price_per_hour":"9.60","from":"2026-11-03T10:00:00Z"}}"#;
    const FAULT: &str = r#"{"specversion":"1.0","id":"f-1","source":"mon","type":"node.fault","subject":"platform","data":{"node":"node/7","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:30:00Z"}}"#;
    const COUNTER: &str = r#"{"specversion":"1.0","id":"c-1","source":"gw","type":"net.counter","subject":"acme","data":{"lease":"l-9","interface":"eth0","dest":"internet","bytes_total":42,"at":"2026-11-03T10:00:00Z"}}"#;

    fn with(base: &str, field: &str, value: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(base).unwrap();
        let patch: serde_json::Value = serde_json::from_str(value).unwrap();
        match field.strip_prefix("data.") {
            Some(f) if patch.is_null() => {
                v["data"].as_object_mut().unwrap().remove(f);
            }
            Some(f) => v["data"][f] = patch,
            None => v[field] = patch,
        }
        v.to_string()
    }

    fn reason(text: &str) -> RejectReason {
        decode_any(text.as_bytes()).expect_err(text).reason
    }

    #[test]
    fn decodes_the_four_rental_types() {
        let e = decode_any(STATE.as_bytes()).unwrap();
        let AnyData::Rental(RentalData::LeaseState(s)) = &e.data else {
            panic!()
        };
        assert_eq!(
            (s.state.as_str(), s.at.secs % 60, s.at.nanos),
            ("stopped", 0, 500_000_000)
        );
        assert!(!e.is_platform());
        let e = decode_any(PRICE.as_bytes()).unwrap();
        assert!(e.is_platform());
        assert_eq!(e.data_type(), "spot.price");
        let e = decode_any(FAULT.as_bytes()).unwrap();
        assert!(e.is_platform());
        let e = decode_any(COUNTER.as_bytes()).unwrap();
        let AnyData::Rental(RentalData::NetCounter(c)) = &e.data else {
            panic!()
        };
        assert_eq!(c.bytes_total, 42);
    }

    #[test]
    fn every_rental_validation_rule_has_its_reason() {
        use RejectReason::*;
        let cases: Vec<(String, RejectReason)> = vec![
            (with(STATE, "data.state", r#""paused""#), BadState),
            (with(STATE, "data.state", "3"), BadState),
            (with(STATE, "data.state", "null"), MissingField),
            (with(STATE, "data.at", "null"), MissingField),
            (
                with(STATE, "data.at", r#""1999-12-31T23:59:59Z""#),
                TimeOutOfRange,
            ),
            (with(STATE, "data.at", r#""yesterday""#), BadTime),
            (with(STATE, "subject", r#""a/b""#), BadSubject),
            (with(STATE, "data.lease", "null"), MissingField),
            (with(PRICE, "data.price_per_hour", r#""-1""#), BadPrice),
            (with(PRICE, "data.price_per_hour", "9.6"), BadPrice),
            (with(PRICE, "data.price_per_hour", r#""cheap""#), BadPrice),
            (with(PRICE, "data.price_per_hour", r#""1e3""#), BadPrice),
            (
                with(PRICE, "data.price_per_hour", r#""1000000001""#),
                BadPrice,
            ),
            (with(PRICE, "data.price_per_hour", "null"), MissingField),
            (
                with(PRICE, "data.from", r#""2100-01-01T00:00:01Z""#),
                TimeOutOfRange,
            ),
            (with(PRICE, "subject", r#""zone a""#), BadSubject),
            (
                with(FAULT, "data.end", r#""2026-11-03T10:00:00Z""#),
                EmptyInterval,
            ),
            (
                with(FAULT, "data.end", r#""2026-11-03T09:00:00Z""#),
                EmptyInterval,
            ),
            (with(FAULT, "data.node", "null"), MissingField),
            (with(COUNTER, "data.bytes_total", "-5"), BadBytes),
            (with(COUNTER, "data.bytes_total", "1.5"), BadBytes),
            (with(COUNTER, "data.bytes_total", r#""42""#), BadBytes),
            (with(COUNTER, "data.bytes_total", "null"), MissingField),
            (with(COUNTER, "data.interface", "null"), MissingField),
            (with(COUNTER, "data.dest", "null"), MissingField),
            (with(COUNTER, "type", r#""net.counters""#), UnknownType),
        ];
        for (text, want) in cases {
            assert_eq!(reason(&text), want, "{text}");
        }
        let r = decode_any(with(STATE, "data.state", r#""paused""#).as_bytes()).unwrap_err();
        assert_eq!(
            (r.source.as_deref(), r.id.as_deref()),
            (Some("ctl/1"), Some("s-1"))
        );
        assert!(r.detail.contains("paused"), "{}", r.detail);
    }

    #[test]
    fn the_part_1_reader_still_knows_only_part_1_types() {
        let r = decode(STATE.as_bytes()).unwrap_err();
        assert_eq!(r.reason, RejectReason::UnknownType);
        assert_eq!(r.id.as_deref(), Some("s-1"));
    }

    #[test]
    fn rental_fingerprints_ignore_spelling_but_not_meaning() {
        let fp = |t: &str| decode_any(t.as_bytes()).unwrap().fingerprint();
        assert_eq!(
            fp(PRICE),
            fp(&with(PRICE, "data.price_per_hour", r#""9.6""#)
                .replace("2026-11-03T10:00:00Z", "2026-11-03T18:00:00+08:00"))
        );
        assert_ne!(
            fp(PRICE),
            fp(&with(PRICE, "data.price_per_hour", r#""9.7""#))
        );
        assert_ne!(fp(STATE), fp(&with(STATE, "data.state", r#""running""#)));
        assert_ne!(fp(COUNTER), fp(&with(COUNTER, "data.bytes_total", "43")));
        // A part-1 event fingerprints as it always did.
        let usage = r#"{"specversion":"1.0","id":"h","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"l","resource":"r","sku":"s","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:30Z"}}"#;
        assert_eq!(fp(usage), decode(usage.as_bytes()).unwrap().fingerprint());
    }

    #[test]
    fn rental_events_dedupe_like_usage() {
        use crate::ledger::meter::{Admission, Meter};
        let mut m = Meter::new();
        assert_eq!(m.ingest(PRICE.as_bytes()), Admission::Accepted);
        assert_eq!(m.ingest(PRICE.as_bytes()), Admission::Duplicate);
        let changed = with(PRICE, "data.price_per_hour", r#""1.00""#);
        match m.ingest(changed.as_bytes()) {
            Admission::Rejected(r) => assert_eq!(r.reason, RejectReason::Conflict),
            other => panic!("{other:?}"),
        }
        assert_eq!(m.ingest(STATE.as_bytes()), Admission::Accepted);
        // Platform events name no account; lease.state names its subject.
        let accounts: Vec<&str> = m.accounts().map(|(a, _)| a).collect();
        assert_eq!(accounts, ["acme"]);
        assert_eq!(m.platform().curve("gpu.h100").unwrap().len(), 1);
    }
}
