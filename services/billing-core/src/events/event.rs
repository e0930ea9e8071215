//! CloudEvents 1.0 (structured JSON mode) decoding and validation of `gpu.usage` and
//! `net.egress`: billing-semantics.md section 1.
//!
//! Decoding never panics and never drops anything silently: every record either becomes an
//! [`Event`] or a [`Rejection`] with a closed [`RejectReason`] and a detail naming the field.
//!
//! Choices where the page is silent:
//! - Unknown attributes (CloudEvents extensions, `datacontenttype`, ...) are ignored; only the
//!   attributes gpubill reads are limited to 256 bytes (the 64 KiB record limit bounds the rest).
//! - `time` is optional for `gpu.usage` (the interval says when) and required for `net.egress`
//!   (egress is rated by its `time`).
//! - `lease` is required for `gpu.usage` (it is part of the usage key) and optional for
//!   `net.egress` (egress is rated per account and dest).
//! - `quantity` is a decimal string; a JSON integer is accepted too, a JSON float is rejected
//!   (`bad_quantity`) because it may already have lost precision. `bytes` is a JSON integer.
//! - An empty string counts as missing.

use crate::common::limits::{MAX_INTERVAL_SECONDS, MAX_RECORD_BYTES};
use crate::common::timestamp::Timestamp;
pub(crate) use crate::events::event_fields::{
    Canon, Check, bytes, class, optional_str, optional_time, quantity, reject, required_str,
    required_time,
};
pub use crate::events::event_fields::{Class, is_account_id};
use crate::events::json::{self, EventObject, Scalar};
pub use crate::events::oversize::{
    OVERSIZE_KEPT_BYTES, kept_payload, oversize_stand_in, stored_form,
};
use crate::events::oversize::{oversize_header, too_large};
pub use crate::events::reject::{RejectReason, Rejection};
pub use crate::rental::RentalData;
use rust_decimal::Decimal;
use std::borrow::Cow;

/// A valid event. Strings borrow from the record where JSON escapes allow.
///
/// `D` is the kind of data: [`EventData`] (part 1: `gpu.usage`, `net.egress`) by default, or
/// [`AnyData`] for every type gpubill reads (part 2 adds the rental events of
/// [`crate::rental`]). [`decode`] returns part-1 events only, as it always has; the meter
/// reads every type with [`decode_any`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<'a, D = EventData<'a>> {
    pub source: Cow<'a, str>,
    pub id: Cow<'a, str>,
    /// The billed account (for platform events, `spot.price` and `node.fault`: the zone or
    /// `platform`).
    pub subject: Cow<'a, str>,
    pub time: Option<Timestamp>,
    pub data: D,
}

/// The data of any event type gpubill reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyData<'a> {
    Part1(EventData<'a>),
    Rental(RentalData<'a>),
}

/// An event of any type.
pub type AnyEvent<'a> = Event<'a, AnyData<'a>>;

impl<'a> AnyEvent<'a> {
    /// The part-1 event, if it is one; else the event back, unchanged (not an error: the
    /// caller decides, so its size does not matter).
    #[allow(clippy::result_large_err)]
    pub fn into_part1(self) -> Result<Event<'a>, Self> {
        match self.data {
            AnyData::Part1(data) => Ok(Event {
                source: self.source,
                id: self.id,
                subject: self.subject,
                time: self.time,
                data,
            }),
            AnyData::Rental(_) => Err(self),
        }
    }

    /// [`Event::fingerprint_with`] for any type; a part-1 event fingerprints exactly as
    /// before part 2 (stored fingerprints stay valid).
    pub fn fingerprint_with(&self, scratch: &mut Vec<u8>) -> u128 {
        scratch.clear();
        let mut w = Canon { buf: scratch };
        w.header(&self.subject, self.time);
        match &self.data {
            AnyData::Part1(d) => w.part1(d),
            AnyData::Rental(r) => r.canon(&mut w),
        }
        xxhash_rust::xxh3::xxh3_128(scratch)
    }

    pub fn fingerprint(&self) -> u128 {
        self.fingerprint_with(&mut Vec::new())
    }

    /// The CloudEvents `type`.
    pub fn data_type(&self) -> &'static str {
        match &self.data {
            AnyData::Part1(EventData::Usage(_)) => "gpu.usage",
            AnyData::Part1(EventData::Egress(_)) => "net.egress",
            AnyData::Rental(r) => r.data_type(),
        }
    }

    /// The last whole second the event speaks of (for the engine's time limits).
    pub fn end_secs(&self) -> i64 {
        match &self.data {
            AnyData::Part1(EventData::Usage(u)) => u.end.ceil_secs(),
            AnyData::Part1(EventData::Egress(x)) => x.time.ceil_secs(),
            AnyData::Rental(r) => r.end_secs(),
        }
    }

    /// Whether this is a platform event (`spot.price`, `node.fault`): it names no account.
    pub fn is_platform(&self) -> bool {
        matches!(&self.data, AnyData::Rental(r) if r.is_platform())
    }

    /// [`Event::ending_by`] for any type.
    #[allow(clippy::result_large_err)]
    pub fn ending_by(self, latest_end_s: i64) -> Result<Self, Rejection> {
        match too_early(&self.source, &self.id, self.end_secs(), latest_end_s) {
            Some(r) => Err(r),
            None => Ok(self),
        }
    }

    /// [`Event::ending_after`] for any type.
    #[allow(clippy::result_large_err)]
    pub fn ending_after(self, earliest_end_s: i64) -> Result<Self, Rejection> {
        match too_late(&self.source, &self.id, self.end_secs(), earliest_end_s) {
            Some(r) => Err(r),
            None => Ok(self),
        }
    }
}

/// `too_early` when an event ending at `end_s` ends after `latest_end_s`.
fn too_early(source: &str, id: &str, end_s: i64, latest_end_s: i64) -> Option<Rejection> {
    if end_s <= latest_end_s {
        return None;
    }
    let mut r = Rejection::new(
        RejectReason::TooEarly,
        format!(
            "the event ends at {}, after {} (the engine's clock plus the accepted future)",
            crate::common::timestamp::format_secs(end_s),
            crate::common::timestamp::format_secs(latest_end_s)
        ),
    );
    r.source = Some(source.to_string());
    r.id = Some(id.to_string());
    Some(r)
}

/// `too_late` when an event ending at `end_s` ends before `earliest_end_s`.
fn too_late(source: &str, id: &str, end_s: i64, earliest_end_s: i64) -> Option<Rejection> {
    if end_s >= earliest_end_s {
        return None;
    }
    let mut r = Rejection::new(
        RejectReason::TooLate,
        format!(
            "the event ends at {}, before {} (the engine's clock less its dedupe horizon): it could count twice",
            crate::common::timestamp::format_secs(end_s),
            crate::common::timestamp::format_secs(earliest_end_s)
        ),
    );
    r.source = Some(source.to_string());
    r.id = Some(id.to_string());
    Some(r)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventData<'a> {
    Usage(Usage<'a>),
    Egress(Egress<'a>),
}

/// `gpu.usage`: a resource of a lease was in use over `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage<'a> {
    pub lease: Cow<'a, str>,
    pub resource: Cow<'a, str>,
    pub sku: Cow<'a, str>,
    pub class: Class,
    pub start: Timestamp,
    pub end: Timestamp,
    pub quantity: Decimal,
    /// Section 19: the region (`None`: home, as a missing or empty `region`).
    pub region: Option<Cow<'a, str>>,
}

impl Usage<'_> {
    /// The whole seconds billed: `floor(start) .. ceil(end)` (half-open).
    pub fn seconds(&self) -> (i64, i64) {
        (self.start.floor_secs(), self.end.ceil_secs())
    }
}

/// `net.egress`: `bytes` left towards `dest` at the event's `time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress<'a> {
    pub lease: Option<Cow<'a, str>>,
    pub dest: Cow<'a, str>,
    pub bytes: u64,
    /// Copy of the event's `time` (required for egress).
    pub time: Timestamp,
    /// Section 19: the region (`None`: home).
    pub region: Option<Cow<'a, str>>,
}

impl Event<'_> {
    /// A 128-bit fingerprint of the event's *meaning*: type, subject, time and data, with
    /// times compared as instants and quantities as numbers. Two deliveries with the same
    /// identity are duplicates when their fingerprints match and a conflict otherwise, so
    /// `"+08:00"` versus `"Z"` spellings of one instant, `"0.5"` versus `"0.50"`, key order and
    /// whitespace never make a conflict, while any change of what is billed does.
    pub fn fingerprint(&self) -> u128 {
        self.fingerprint_with(&mut Vec::new())
    }

    /// [`Event::fingerprint`] writing its canonical bytes into a reusable `scratch` buffer.
    pub fn fingerprint_with(&self, scratch: &mut Vec<u8>) -> u128 {
        scratch.clear();
        let mut w = Canon { buf: scratch };
        w.header(&self.subject, self.time);
        w.part1(&self.data);
        xxhash_rust::xxh3::xxh3_128(scratch)
    }

    /// The end of what the event bills, in whole seconds: `ceil(end)` of a usage interval,
    /// `ceil(time)` of egress.
    pub fn end_secs(&self) -> i64 {
        match &self.data {
            EventData::Usage(u) => u.end.ceil_secs(),
            EventData::Egress(x) => x.time.ceil_secs(),
        }
    }

    /// Refuses an event that ends after `latest_end_s` (the engine's clock plus its configured
    /// limit) as `too_early`, carrying the identity. The core reads no clock: the engine
    /// passes the limit in.
    pub fn ending_by(self, latest_end_s: i64) -> Result<Self, Rejection> {
        match too_early(&self.source, &self.id, self.end_secs(), latest_end_s) {
            Some(r) => Err(r),
            None => Ok(self),
        }
    }

    /// Refuses an event that ends before `earliest_end_s` (the engine's clock less its dedupe
    /// horizon) as `too_late`, carrying the identity.
    pub fn ending_after(self, earliest_end_s: i64) -> Result<Self, Rejection> {
        match too_late(&self.source, &self.id, self.end_secs(), earliest_end_s) {
            Some(r) => Err(r),
            None => Ok(self),
        }
    }

    pub fn into_owned(self) -> Event<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        Event {
            source: own(self.source),
            id: own(self.id),
            subject: own(self.subject),
            time: self.time,
            data: match self.data {
                EventData::Usage(u) => EventData::Usage(Usage {
                    lease: own(u.lease),
                    resource: own(u.resource),
                    sku: own(u.sku),
                    class: u.class,
                    start: u.start,
                    end: u.end,
                    quantity: u.quantity,
                    region: u.region.map(own),
                }),
                EventData::Egress(e) => EventData::Egress(Egress {
                    lease: e.lease.map(own),
                    dest: own(e.dest),
                    bytes: e.bytes,
                    time: e.time,
                    region: e.region.map(own),
                }),
            },
        }
    }
}

impl Canon<'_> {
    fn header(&mut self, subject: &str, time: Option<Timestamp>) {
        self.str(subject);
        match time {
            Some(t) => {
                self.put(&[1]);
                self.time(t);
            }
            None => self.put(&[0]),
        }
    }

    /// Section 19: a region is part of the content; none adds nothing, so an event without
    /// one fingerprints exactly as before part 3.
    pub(crate) fn region(&mut self, region: Option<&str>) {
        if let Some(r) = region {
            self.put(b"R");
            self.str(r);
        }
    }

    fn part1(&mut self, data: &EventData<'_>) {
        let w = self;
        match data {
            EventData::Usage(u) => {
                w.put(b"U");
                w.str(&u.lease);
                w.str(&u.resource);
                w.str(&u.sku);
                w.put(&[u.class as u8]);
                w.time(u.start);
                w.time(u.end);
                w.put(&u.quantity.normalize().serialize());
                w.region(u.region.as_deref());
            }
            EventData::Egress(e) => {
                w.put(b"E");
                match &e.lease {
                    Some(l) => {
                        w.put(&[1]);
                        w.str(l);
                    }
                    None => w.put(&[0]),
                }
                w.str(&e.dest);
                w.put(&e.bytes.to_le_bytes());
                w.region(e.region.as_deref());
            }
        }
    }
}

/// Decodes and validates one part-1 record (`gpu.usage`, `net.egress`). Never panics,
/// whatever the bytes. The part-2 types are `unknown_type` here, as they were before part 2:
/// callers that handle them read records with [`decode_any`].
pub fn decode(record: &[u8]) -> Result<Event<'_>, Rejection> {
    match decode_any(record)?.into_part1() {
        Ok(e) => Ok(e),
        Err(e) => {
            let mut r = Rejection::new(
                RejectReason::UnknownType,
                format!(
                    "type {:?} is read by the rental rules (decode_any), not by this part-1 reader",
                    e.data_type()
                ),
            );
            r.source = Some(e.source.to_string());
            r.id = Some(e.id.to_string());
            Err(r)
        }
    }
}

/// Decodes and validates one record of any type gpubill reads ([`EVENT_TYPES`]: part 1, the
/// rental events of part 2, and section 18's `lease.tags`). Never panics, whatever the bytes.
pub fn decode_any(record: &[u8]) -> Result<AnyEvent<'_>, Rejection> {
    if record.len() > MAX_RECORD_BYTES {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(record));
        return Err(too_large(record.len() as u64, &digest));
    }
    if let Some((len, digest, _)) = oversize_header(record) {
        return Err(too_large(len, digest));
    }
    // A binary-mode message that could not be converted (crate::events::binary_mode::record).
    if let Some(r) = crate::events::binary_mode::refused(record) {
        return Err(r);
    }
    // Validating UTF-8 once for the record is cheaper than string by string.
    let Ok(text) = std::str::from_utf8(record) else {
        return reject(RejectReason::MalformedJson, "record is not valid UTF-8");
    };
    let mut raw = match json::read_event(text) {
        Ok(raw) => raw,
        Err(e) => {
            return reject(
                RejectReason::MalformedJson,
                format!("not a JSON object: {e}"),
            );
        }
    };
    // Read the identity first so every later rejection can carry it.
    let id = optional_str(std::mem::take(&mut raw.attrs[1]), "id");
    let source = optional_str(std::mem::take(&mut raw.attrs[2]), "source");
    let ident = |mut r: Rejection| {
        if let Ok(Some(s)) = &source {
            r.source = Some(s.to_string());
        }
        if let Ok(Some(i)) = &id {
            r.id = Some(i.to_string());
        }
        r
    };
    validate(raw, id.clone(), source.clone()).map_err(ident)
}

fn validate<'a>(
    raw: EventObject<'a>,
    id: Check<Option<Cow<'a, str>>>,
    source: Check<Option<Cow<'a, str>>>,
) -> Check<AnyEvent<'a>> {
    let [specversion, _, _, kind, subject, time] = raw.attrs;
    match &specversion {
        Scalar::Str(v) if v == "1.0" => {}
        Scalar::Str(v) => {
            let shown: String = v.chars().take(40).collect();
            return reject(
                RejectReason::BadSpecversion,
                format!("specversion {shown:?} is not \"1.0\""),
            );
        }
        _ => {
            return reject(
                RejectReason::BadSpecversion,
                "specversion \"1.0\" is missing",
            );
        }
    }
    let id = id?.ok_or_else(|| Rejection::new(RejectReason::MissingId, "id is missing"))?;
    let source =
        source?.ok_or_else(|| Rejection::new(RejectReason::MissingSource, "source is missing"))?;
    let kind = match optional_str(kind, "type") {
        Ok(Some(t)) if EVENT_TYPES.contains(&&*t) => t,
        Ok(Some(t)) => {
            let shown: String = t.chars().take(40).collect();
            return reject(
                RejectReason::UnknownType,
                format!("type {shown:?} is not one of {}", EVENT_TYPES.join(", ")),
            );
        }
        Ok(None) => return reject(RejectReason::UnknownType, "type is missing"),
        Err(_) => return reject(RejectReason::UnknownType, "type must be a string"),
    };
    let subject = required_str(subject, "subject", RejectReason::MissingSubject)?;
    if !is_account_id(&subject) {
        let shown: String = subject.escape_debug().take(60).collect();
        return reject(
            RejectReason::BadSubject,
            format!("subject \"{shown}\" is not an account id (1 to 256 of A-Z a-z 0-9 . _ -)"),
        );
    }
    let time = optional_time(time, "time")?;
    let fields = match raw.data {
        None => return reject(RejectReason::MissingField, "data is missing"),
        Some(Err(())) => return reject(RejectReason::WrongType, "data must be an object"),
        Some(Ok(d)) => d,
    };
    let data = match &*kind {
        "gpu.usage" => AnyData::Part1(EventData::Usage(usage_data(fields)?)),
        "net.egress" => AnyData::Part1(EventData::Egress(egress_data(fields, time)?)),
        "lease.tags" => AnyData::Rental(crate::rental::RentalData::LeaseTags(
            crate::rental::lease_tags_data(fields)?,
        )),
        other => AnyData::Rental(crate::rental::rental_data(other, fields)?),
    };
    Ok(Event {
        source,
        id,
        subject,
        time,
        data,
    })
}

/// Every event type gpubill reads: part 1, then the rental events of part 2 and section 18's
/// `lease.tags`.
pub const EVENT_TYPES: [&str; 7] = [
    "gpu.usage",
    "net.egress",
    "lease.state",
    "spot.price",
    "node.fault",
    "net.counter",
    "lease.tags",
];

/// `data` of a `gpu.usage` (its members in the order of [`json::DATA_MEMBERS`]).
fn usage_data(fields: json::DataMembers<'_>) -> Check<Usage<'_>> {
    let [
        lease,
        resource,
        sku,
        class_,
        start,
        end,
        quantity_,
        ..,
        region,
        _tags,
    ] = fields;
    let region = optional_str(region, "data.region")?;
    let lease = required_str(lease, "data.lease", RejectReason::MissingField)?;
    let resource = required_str(resource, "data.resource", RejectReason::MissingField)?;
    let sku = required_str(sku, "data.sku", RejectReason::MissingField)?;
    let class = class(class_)?;
    let start = required_time(start, "data.start")?;
    let end = required_time(end, "data.end")?;
    let quantity = quantity(quantity_)?;
    let length_nanos = end.nanos_since(start);
    if length_nanos <= 0 {
        return reject(
            RejectReason::EmptyInterval,
            format!("data.end {end} is not after data.start {start}"),
        );
    }
    if length_nanos > MAX_INTERVAL_SECONDS as i128 * 1_000_000_000 {
        return reject(
            RejectReason::IntervalTooLong,
            format!("interval {start} .. {end} is longer than {MAX_INTERVAL_SECONDS} seconds"),
        );
    }
    Ok(Usage {
        lease,
        resource,
        sku,
        class,
        start,
        end,
        quantity,
        region,
    })
}

/// `data` of a `net.egress`, rated at the event's `time` (required here).
fn egress_data(fields: json::DataMembers<'_>, time: Option<Timestamp>) -> Check<Egress<'_>> {
    let [lease, _, _, _, _, _, _, dest, bytes_, .., region, _tags] = fields;
    let region = optional_str(region, "data.region")?;
    let lease = optional_str(lease, "data.lease")?;
    let dest = required_str(dest, "data.dest", RejectReason::MissingField)?;
    let bytes = bytes(bytes_, "data.bytes")?;
    let Some(time) = time else {
        return reject(
            RejectReason::MissingField,
            "time is missing (net.egress is rated by its time)",
        );
    };
    Ok(Egress {
        lease,
        dest,
        bytes,
        time,
        region,
    })
}

#[cfg(test)]
mod tests;
