//! Why a record was rejected: the closed list of reasons every dead letter carries (in
//! snake_case on the wire), and a rejection with the detail naming the field. Re-exported by
//! [`crate::events::event`], where decoding produces them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why an event was rejected. Closed: every rejection is one of these, serialized in
/// snake_case (`interval_too_long`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// The record is over 64 KiB.
    RecordTooLarge,
    /// Not a JSON object (bad JSON, bad UTF-8, duplicate attribute, an array, ...); in
    /// binary mode ([`crate::events::binary_mode`]), headers that do not decode or repeat an
    /// attribute, or a body that is not JSON.
    MalformedJson,
    /// `specversion` missing or not `1.0`.
    BadSpecversion,
    /// `type` missing or not one of `gpu.usage`, `net.egress`, `lease.state`, `spot.price`,
    /// `node.fault`, `net.counter` ([`decode`], the part-1 reader, knows only the first two).
    UnknownType,
    MissingId,
    MissingSource,
    MissingSubject,
    /// A required data field (`lease`, `resource`, `sku`, `start`, `end`, `dest`, `bytes`,
    /// or `time` on egress) or `data` itself is missing.
    MissingField,
    /// An attribute or field has the wrong JSON type (a number where a string belongs, ...);
    /// in binary mode, data whose content type is not JSON.
    WrongType,
    /// A string over 256 bytes.
    StringTooLong,
    /// A string attribute or field holding a control character (U+0000 to U+001F, U+007F):
    /// no identity, account, lease or sku needs one, and a NUL cannot be stored as text.
    ControlCharacter,
    /// `subject` is not an account id: 1 to 256 of `A-Z a-z 0-9 . _ -`.
    BadSubject,
    /// A time that is not RFC 3339.
    BadTime,
    /// A time outside the supported range, 2000-01-01T00:00:00Z to 2100-01-01T00:00:00Z.
    TimeOutOfRange,
    /// The event ends further in the future than the engine accepts (its clock, plus the
    /// configured limit): a node agent with a wrong clock. Decided by the engine, which has a
    /// clock; the core never reads one.
    TooEarly,
    /// The event ended before the engine's dedupe horizon (its clock less the configured
    /// horizon): its identity may have been compacted away, so it could count twice.
    TooLate,
    /// `end <= start`.
    EmptyInterval,
    /// `end - start` over 86,400 s.
    IntervalTooLong,
    /// `quantity` not a decimal, `<= 0` or above 10,000.
    BadQuantity,
    /// `bytes` negative or not an integer.
    BadBytes,
    /// `class` neither `on_demand` nor `spot`.
    BadClass,
    /// Same (source, id) as an earlier event with different content.
    Conflict,
    /// `lease.state`'s `state` is not one of `provisioning`, `running`, `stopped`,
    /// `host_down`, `preempted`, `terminated`.
    BadState,
    /// `spot.price`'s `price_per_hour` not a decimal string, negative or above the price
    /// book's rate limit.
    BadPrice,
}

impl RejectReason {
    /// Every reason, in declaration order (for metrics and docs).
    pub const ALL: [RejectReason; 24] = [
        RejectReason::RecordTooLarge,
        RejectReason::MalformedJson,
        RejectReason::BadSpecversion,
        RejectReason::UnknownType,
        RejectReason::MissingId,
        RejectReason::MissingSource,
        RejectReason::MissingSubject,
        RejectReason::MissingField,
        RejectReason::WrongType,
        RejectReason::StringTooLong,
        RejectReason::ControlCharacter,
        RejectReason::BadSubject,
        RejectReason::BadTime,
        RejectReason::TimeOutOfRange,
        RejectReason::TooEarly,
        RejectReason::TooLate,
        RejectReason::EmptyInterval,
        RejectReason::IntervalTooLong,
        RejectReason::BadQuantity,
        RejectReason::BadBytes,
        RejectReason::BadClass,
        RejectReason::Conflict,
        RejectReason::BadState,
        RejectReason::BadPrice,
    ];

    /// A stored reason (`dead_letters.reason`); anything else is `None`, never a default:
    /// the caller names where the unknown value was found.
    pub fn parse(s: &str) -> Option<RejectReason> {
        RejectReason::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::RecordTooLarge => "record_too_large",
            RejectReason::MalformedJson => "malformed_json",
            RejectReason::BadSpecversion => "bad_specversion",
            RejectReason::UnknownType => "unknown_type",
            RejectReason::MissingId => "missing_id",
            RejectReason::MissingSource => "missing_source",
            RejectReason::MissingSubject => "missing_subject",
            RejectReason::MissingField => "missing_field",
            RejectReason::WrongType => "wrong_type",
            RejectReason::StringTooLong => "string_too_long",
            RejectReason::ControlCharacter => "control_character",
            RejectReason::BadSubject => "bad_subject",
            RejectReason::BadTime => "bad_time",
            RejectReason::TimeOutOfRange => "time_out_of_range",
            RejectReason::TooEarly => "too_early",
            RejectReason::TooLate => "too_late",
            RejectReason::EmptyInterval => "empty_interval",
            RejectReason::IntervalTooLong => "interval_too_long",
            RejectReason::BadQuantity => "bad_quantity",
            RejectReason::BadBytes => "bad_bytes",
            RejectReason::BadClass => "bad_class",
            RejectReason::Conflict => "conflict",
            RejectReason::BadState => "bad_state",
            RejectReason::BadPrice => "bad_price",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rejected record: the reason, a human detail naming the field, and the identity when it
/// could be read (so a dead letter can be traced back to its producer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub reason: RejectReason,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Rejection {
    pub fn new(reason: RejectReason, detail: impl Into<String>) -> Self {
        Rejection {
            reason,
            detail: detail.into(),
            source: None,
            id: None,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}
