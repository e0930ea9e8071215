//! The readers of an event's attributes and data fields: each answers the value or the
//! [`Rejection`] naming the field and what is wrong with it (billing-semantics.md section 1), the
//! pricing class, and the writer of an event's canonical bytes. Below [`crate::events::event`] and
//! [`crate::rental`], which both decode with them.

use crate::common::limits::{MAX_EVENT_SECS, MAX_QUANTITY, MAX_STRING_BYTES, MIN_EVENT_SECS};
use crate::common::timestamp::Timestamp;
use crate::events::json::Scalar;
use crate::events::reject::{RejectReason, Rejection};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

pub(crate) type Check<T> = Result<T, Rejection>;

pub(crate) fn reject<T>(reason: RejectReason, detail: impl Into<String>) -> Check<T> {
    Err(Rejection::new(reason, detail))
}

/// A required string attribute: present, a string, non-empty, at most 256 bytes.
pub(crate) fn required_str<'a>(
    v: Scalar<'a>,
    name: &str,
    missing: RejectReason,
) -> Check<Cow<'a, str>> {
    match optional_str(v, name)? {
        Some(s) => Ok(s),
        None => reject(missing, format!("{name} is missing")),
    }
}

pub(crate) fn optional_str<'a>(v: Scalar<'a>, name: &str) -> Check<Option<Cow<'a, str>>> {
    match v {
        Scalar::Absent | Scalar::Null => Ok(None),
        Scalar::Str(s) if s.is_empty() => Ok(None),
        Scalar::Str(s) if s.len() > MAX_STRING_BYTES => reject(
            RejectReason::StringTooLong,
            format!(
                "{name} is {} bytes, over the limit of {MAX_STRING_BYTES}",
                s.len()
            ),
        ),
        Scalar::Str(s) if s.chars().any(|c| c.is_ascii_control()) => reject(
            RejectReason::ControlCharacter,
            format!("{name} holds a control character (U+0000 to U+001F or U+007F)"),
        ),
        Scalar::Str(s) => Ok(Some(s)),
        _ => reject(RejectReason::WrongType, format!("{name} must be a string")),
    }
}

pub(crate) fn required_time(v: Scalar<'_>, name: &str) -> Check<Timestamp> {
    match optional_time(v, name)? {
        Some(t) => Ok(t),
        None => reject(RejectReason::MissingField, format!("{name} is missing")),
    }
}

pub(crate) fn optional_time(v: Scalar<'_>, name: &str) -> Check<Option<Timestamp>> {
    let Some(text) = optional_str(v, name)? else {
        return Ok(None);
    };
    match Timestamp::parse_rfc3339(&text) {
        Some(t)
            if (MIN_EVENT_SECS..=MAX_EVENT_SECS).contains(&t.secs)
                && (t.secs < MAX_EVENT_SECS || t.nanos == 0) =>
        {
            Ok(Some(t))
        }
        Some(_) => reject(
            RejectReason::TimeOutOfRange,
            format!(
                "{name} {text:?} is outside the supported range {} .. {}",
                crate::common::timestamp::format_secs(MIN_EVENT_SECS),
                crate::common::timestamp::format_secs(MAX_EVENT_SECS)
            ),
        ),
        None => reject(
            RejectReason::BadTime,
            format!("{name} {text:?} is not an RFC 3339 time"),
        ),
    }
}

/// Whether `s` is an account id: 1 to 256 of `A-Z a-z 0-9 . _ -` (the grammar of
/// `POST /v1/admin/accounts`). A subject is the billed account, so anything else (`' OR 1=1`,
/// `tenant-a\0`, look-alike letters) would become an account of its own. Used by the event
/// decoder, billing-store's authorizations and account terms' ids (`pricing/terms.rs`,
/// `check_term_id`) and billing-api's `create_account`.
pub fn is_account_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_STRING_BYTES
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub(crate) fn quantity(v: Scalar<'_>) -> Check<Decimal> {
    let q = match v {
        Scalar::Absent | Scalar::Null => return Ok(Decimal::ONE),
        Scalar::Str(s) => match crate::common::decimal::parse(&s) {
            Ok(q) if s.len() <= MAX_STRING_BYTES => q,
            Ok(_) => {
                return reject(
                    RejectReason::BadQuantity,
                    format!("quantity is {} bytes long", s.len()),
                );
            }
            Err(e) => {
                let shown: String = s.chars().take(40).collect();
                return reject(RejectReason::BadQuantity, format!("quantity {shown:?} {e}"));
            }
        },
        Scalar::UInt(n) => Decimal::from(n),
        Scalar::NegInt(n) => Decimal::from(n),
        Scalar::Float => {
            return reject(
                RejectReason::BadQuantity,
                "quantity must be a decimal string such as \"0.25\", not a JSON float",
            );
        }
        _ => {
            return reject(
                RejectReason::BadQuantity,
                "quantity must be a decimal string",
            );
        }
    };
    if q <= Decimal::ZERO || q > MAX_QUANTITY {
        return reject(
            RejectReason::BadQuantity,
            format!("quantity {q} is outside (0, {MAX_QUANTITY}]"),
        );
    }
    Ok(q)
}

pub(crate) fn bytes(v: Scalar<'_>, name: &str) -> Check<u64> {
    match v {
        Scalar::UInt(n) => Ok(n),
        Scalar::Absent | Scalar::Null => {
            reject(RejectReason::MissingField, format!("{name} is missing"))
        }
        Scalar::NegInt(n) => reject(RejectReason::BadBytes, format!("{name} {n} is negative")),
        _ => reject(
            RejectReason::BadBytes,
            format!("{name} must be a non-negative JSON integer"),
        ),
    }
}

pub(crate) fn class(v: Scalar<'_>) -> Check<Class> {
    match optional_str(v, "data.class") {
        Ok(None) => Ok(Class::OnDemand),
        Ok(Some(s)) if s == "on_demand" => Ok(Class::OnDemand),
        Ok(Some(s)) if s == "spot" => Ok(Class::Spot),
        Ok(Some(s)) => reject(
            RejectReason::BadClass,
            format!("data.class {s:?} is neither \"on_demand\" nor \"spot\""),
        ),
        Err(e) if e.reason == RejectReason::WrongType => {
            reject(RejectReason::BadClass, "data.class must be a string")
        }
        Err(e) => Err(e),
    }
}

/// Pricing class of a usage key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    OnDemand,
    Spot,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::OnDemand => "on_demand",
            Class::Spot => "spot",
        }
    }

    /// A stored class (`on_demand`, `spot`); anything else is `None`, never a default.
    pub fn parse(s: &str) -> Option<Class> {
        match s {
            "on_demand" => Some(Class::OnDemand),
            "spot" => Some(Class::Spot),
            _ => None,
        }
    }
}

/// Writes an event's canonical bytes for [`Event::fingerprint`].
pub(crate) struct Canon<'b> {
    pub(crate) buf: &'b mut Vec<u8>,
}

impl Canon<'_> {
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.put(&(s.len() as u32).to_le_bytes());
        self.put(s.as_bytes());
    }
    pub(crate) fn time(&mut self, t: Timestamp) {
        self.put(&t.secs.to_le_bytes());
        self.put(&t.nanos.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::Class;

    #[test]
    fn a_stored_class_reads_back_and_an_unknown_one_is_none() {
        for class in [Class::OnDemand, Class::Spot] {
            assert_eq!(Class::parse(class.as_str()), Some(class));
        }
        assert_eq!(Class::parse("reserved"), None);
    }

    #[test]
    fn account_ids_are_1_to_256_bytes_of_letters_digits_dot_underscore_dash() {
        use super::is_account_id;
        // 256 bytes is the longest id (MAX_STRING_BYTES); 257 is one too many; 0 is none.
        assert!(is_account_id("tenant-a.prod_1"));
        assert!(is_account_id("-leading-dash"));
        assert!(is_account_id(&"a".repeat(256)));
        assert!(!is_account_id(&"a".repeat(257)));
        assert!(!is_account_id(""));
        for bad in ["' OR 1=1", "tenant-a\0", "a b", "a/b", "аcme", "a:b"] {
            assert!(!is_account_id(bad), "{bad:?}");
        }
    }
}
