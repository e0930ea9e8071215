//! CloudEvents binary content mode: a message whose attributes travel as `ce-*` HTTP headers (HTTP
//! protocol binding 3.1) or `ce_*` Kafka record headers (Kafka protocol binding 3.2), with the data
//! alone as the body, turned into the structured-mode JSON record it stands for. That record then
//! goes through [`crate::events::event::decode_any`] like any other, so an event sent in binary
//! mode and the same event sent structured have one identity and one fingerprint (the fingerprint
//! reads subject, time, type and data, none of the envelope): a redelivery in the other mode is a
//! duplicate, never a conflict.
//!
//! Pure: the engine hands in the header names and values and the body.
//!
//! Choices (collected in [`crate::choices`]):
//! - A message is in binary mode when it has a `ce-specversion` (`ce_specversion`) header
//!   and its content type is not a CloudEvents event format (`application/cloudevents...`):
//!   structured and batch messages may repeat their attributes in headers (HTTP binding
//!   3.2.3), and then the body is the event. The Kafka binding decides by the content type
//!   alone, but the official SDKs' structured Kafka records carry the data's content type
//!   (`application/json`), so gpubill asks for the attribute that every binary message has.
//! - Header names match case-insensitively and are lower-cased; what follows the prefix must
//!   be an attribute name (`a`-`z`, `0`-`9`). `data` (it is the body) and `datacontenttype`
//!   (the content type says it; HTTP binding 3.1.1) are refused as headers, as is an
//!   attribute or a content type given twice: `malformed_json`, as structured mode's
//!   duplicate members.
//! - HTTP header values are unquoted when they are a quoted string, then percent-decoded
//!   once (HTTP binding 3.1.3.2: `node%2F1` is `node/1`; unnecessary encoding is accepted,
//!   lower-case hex too); the result must be UTF-8, else `malformed_json`. Kafka header values
//!   are UTF-8 text as they are (Kafka binding 3.2.3).
//! - Every attribute becomes a JSON string member; the content type becomes
//!   `datacontenttype`.
//! - The data must be JSON, as gpubill's event types all carry JSON data: with a JSON content
//!   type (`application/json` or a `+json` type, parameters aside) or none (JSON is implied,
//!   as in the JSON event format) the body is embedded as `data` once it is checked to be one
//!   JSON value (else `malformed_json`); any other content type is `wrong_type`, as a
//!   structured event whose `data` is not an object. An empty body means no data.
//! - A message that cannot be converted is stored as a stand-in ([`record`]) that
//!   [`crate::events::event::decode_any`] refuses with the same rejection, like an oversize record
//!   ([`crate::events::oversize`]): the dead letter keeps what was received (the headers binary
//!   mode reads and the body, as escaped JSON text), and a replay of the log refuses it again.

use crate::events::reject::{RejectReason, Rejection};
use serde::Deserialize;
use std::borrow::Cow;

/// The protocol binding a message came through: it says the header prefix and how header
/// values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `ce-` headers, percent-encoded values.
    Http,
    /// `ce_` record headers, UTF-8 values.
    Kafka,
}

impl Binding {
    pub fn prefix(self) -> &'static str {
        match self {
            Binding::Http => "ce-",
            Binding::Kafka => "ce_",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Binding::Http => "HTTP header",
            Binding::Kafka => "Kafka header",
        }
    }
}

/// Whether a message with these headers is in binary content mode: it has the `specversion`
/// attribute header and its content type is not a CloudEvents event format.
pub fn is_binary<'h>(
    binding: Binding,
    headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
) -> bool {
    let (mut specversion, mut event_format) = (false, false);
    for (name, value) in headers {
        if let Some(attr) = strip_prefix(binding, name) {
            specversion |= attr.eq_ignore_ascii_case("specversion");
        } else if name.eq_ignore_ascii_case("content-type") {
            event_format |= is_event_format(value);
        }
    }
    specversion && !event_format
}

/// `application/cloudevents...` (structured `+json`, batch `-batch+json`, other formats).
fn is_event_format(content_type: &[u8]) -> bool {
    const FORMAT: &[u8] = b"application/cloudevents";
    let v = content_type.trim_ascii_start();
    v.len() >= FORMAT.len() && v[..FORMAT.len()].eq_ignore_ascii_case(FORMAT)
}

fn strip_prefix(binding: Binding, name: &str) -> Option<&str> {
    let prefix = binding.prefix();
    match name.get(..prefix.len()) {
        Some(p) if p.eq_ignore_ascii_case(prefix) => Some(&name[prefix.len()..]),
        _ => None,
    }
}

/// Whether a media type is JSON: `application/json` or any `+json` type (RFC 6839),
/// parameters (`; charset=utf-8`) aside, case-insensitively.
pub fn is_json(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json"
        || (mime.ends_with("+json")
            && mime
                .split_once('/')
                .is_some_and(|(t, s)| !t.is_empty() && s.len() > "+json".len()))
}

/// Decodes the value of an HTTP header that carries a CloudEvents attribute (HTTP binding
/// 3.1.3.2): a quoted string (RFC 7230 3.2.6) is unquoted first, then one round of
/// percent-decoding is applied; the bytes must then be UTF-8 (so an overlong sequence such
/// as `%C0%A0` is refused). Characters the spec says to encode but that came raw are
/// accepted as they are. The error says what is wrong.
pub fn decode_http_value(raw: &[u8]) -> Result<String, &'static str> {
    let unquoted = unquote(raw)?;
    let mut out = Vec::with_capacity(unquoted.len());
    let mut i = 0;
    while i < unquoted.len() {
        if unquoted[i] == b'%' {
            let hex = |j: usize| unquoted.get(j).and_then(|&c| (c as char).to_digit(16));
            match (hex(i + 1), hex(i + 2)) {
                (Some(hi), Some(lo)) => out.push((hi * 16 + lo) as u8),
                _ => return Err("a % not followed by two hex digits"),
            }
            i += 3;
        } else {
            out.push(unquoted[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 once percent-decoded")
}

/// The content of a quoted string, or the value itself when it is not one.
fn unquote(raw: &[u8]) -> Result<Cow<'_, [u8]>, &'static str> {
    let Some(inner) = raw.strip_prefix(b"\"") else {
        return Ok(Cow::Borrowed(raw));
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.iter();
    while let Some(&c) = bytes.next() {
        match c {
            b'\\' => match bytes.next() {
                Some(&escaped) => out.push(escaped),
                None => break,
            },
            b'"' if bytes.as_slice().is_empty() => return Ok(Cow::Owned(out)),
            b'"' => return Err("text after a quoted string"),
            _ => out.push(c),
        }
    }
    Err("a quoted string that is not closed")
}

/// The attributes and content type of a binary-mode message, read from its headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    /// `(name, value)`: names without the prefix, lower-cased; values decoded. In header
    /// order, not yet checked (see [`to_structured`]).
    pub attributes: Vec<(String, String)>,
    /// The `content-type` header: the data's media type.
    pub content_type: Option<String>,
}

/// Reads a binary-mode message's attributes and content type from its headers; other headers
/// are ignored. Refuses a header value that does not decode and a second content type.
pub fn read_headers<'h>(
    binding: Binding,
    headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
) -> Result<Envelope, Rejection> {
    let mut envelope = Envelope::default();
    for (name, value) in headers {
        if let Some(attr) = strip_prefix(binding, name) {
            let decoded = match binding {
                Binding::Http => decode_http_value(value),
                Binding::Kafka => String::from_utf8(value.to_vec()).map_err(|_| "not UTF-8"),
            };
            let decoded = decoded.map_err(|e| {
                malformed(format!(
                    "{} {}: {e}",
                    binding.what(),
                    name.to_ascii_lowercase()
                ))
            })?;
            envelope
                .attributes
                .push((attr.to_ascii_lowercase(), decoded));
        } else if name.eq_ignore_ascii_case("content-type") {
            if envelope.content_type.is_some() {
                return Err(malformed(format!(
                    "{} content-type appears twice",
                    binding.what()
                )));
            }
            let Ok(text) = std::str::from_utf8(value) else {
                return Err(malformed(format!(
                    "{} content-type is not UTF-8",
                    binding.what()
                )));
            };
            envelope.content_type = Some(text.trim().to_string()).filter(|t| !t.is_empty());
        }
    }
    Ok(envelope)
}

/// The attributes gpubill reads, in the order the structured record lists them first.
const FIRST: [&str; 6] = crate::events::json::EVENT_MEMBERS;

/// Builds the structured-mode JSON record of a binary-mode event: `attributes` (names
/// without the prefix, lower-cased; values decoded, see [`read_headers`]) as string members,
/// `content_type` as `datacontenttype`, and `data` (the body) as the `data` member. The
/// record lists gpubill's attributes first, then `datacontenttype`, the extensions by name
/// and `data`. Attributes are not validated here beyond their names: the record goes through
/// [`crate::events::event::decode_any`], which refuses a missing `id` or a bad `time` as it does in
/// structured mode. The rejection carries the event's identity when the attributes name it.
pub fn to_structured<N: AsRef<str>, V: AsRef<str>>(
    attributes: &[(N, V)],
    content_type: Option<&str>,
    data: &[u8],
) -> Result<Vec<u8>, Rejection> {
    let attrs: Vec<(&str, &str)> = attributes
        .iter()
        .map(|(n, v)| (n.as_ref(), v.as_ref()))
        .collect();
    build(&attrs, content_type, data).map_err(|r| identified(r, &attrs))
}

fn build(
    attrs: &[(&str, &str)],
    content_type: Option<&str>,
    data: &[u8],
) -> Result<Vec<u8>, Rejection> {
    for (i, (name, _)) in attrs.iter().enumerate() {
        check_name(name)?;
        if attrs[..i].iter().any(|(n, _)| n == name) {
            return Err(malformed(format!("attribute {name} appears twice")));
        }
    }
    let data = json_data(content_type, data)?;
    let mut ordered: Vec<(&str, &str)> = Vec::with_capacity(attrs.len() + 1);
    for first in FIRST {
        ordered.extend(attrs.iter().filter(|(n, _)| *n == first));
    }
    if let Some(ct) = content_type {
        ordered.push(("datacontenttype", ct));
    }
    let mut rest: Vec<(&str, &str)> = attrs
        .iter()
        .filter(|(n, _)| !FIRST.contains(n))
        .copied()
        .collect();
    rest.sort_unstable();
    ordered.extend(rest);

    let mut out = Vec::with_capacity(64 + data.map_or(0, <[u8]>::len));
    out.push(b'{');
    for (i, (name, value)) in ordered.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Names are a-z 0-9 (checked above); values may hold anything and are escaped.
        out.extend_from_slice(format!("\"{name}\":").as_bytes());
        out.extend_from_slice(json_string(value).as_bytes());
    }
    if let Some(d) = data {
        if !ordered.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"data\":");
        out.extend_from_slice(d);
    }
    out.push(b'}');
    Ok(out)
}

/// A CloudEvents attribute name, and not one that binary mode carries elsewhere.
fn check_name(name: &str) -> Result<(), Rejection> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        let shown: String = name.escape_debug().take(40).collect();
        return Err(malformed(format!(
            "\"{shown}\" is not a CloudEvents attribute name (a-z, 0-9)"
        )));
    }
    match name {
        "data" => Err(malformed(
            "data is the body of a binary-mode message, not an attribute header",
        )),
        "datacontenttype" => Err(malformed(
            "datacontenttype must not be an attribute header: content-type says it",
        )),
        _ => Ok(()),
    }
}

/// The body as the `data` member's JSON text (None: no data), or why it cannot be.
fn json_data<'d>(
    content_type: Option<&str>,
    data: &'d [u8],
) -> Result<Option<&'d [u8]>, Rejection> {
    let said = match content_type {
        Some(ct) if !is_json(ct) => {
            let shown: String = ct.escape_debug().take(80).collect();
            return Err(Rejection::new(
                RejectReason::WrongType,
                format!(
                    "binary mode: content-type \"{shown}\" is not JSON (application/json or a +json type); gpubill's events carry JSON data"
                ),
            ));
        }
        Some(ct) => format!(
            "content-type {}",
            ct.escape_debug().take(80).collect::<String>()
        ),
        None => "no content-type, so JSON".to_string(),
    };
    let body = data.trim_ascii();
    if body.is_empty() {
        return Ok(None);
    }
    // One JSON value and nothing after it, or embedding it could add members to the record.
    let checked = std::str::from_utf8(body)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| e.to_string())
        });
    match checked {
        Ok(_) => Ok(Some(body)),
        Err(e) => Err(Rejection::new(
            RejectReason::MalformedJson,
            format!("binary mode: the body ({said}) is not JSON: {e}"),
        )),
    }
}

fn json_string(s: &str) -> String {
    // Serializing a string cannot fail.
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn malformed(detail: impl AsRef<str>) -> Rejection {
    Rejection::new(
        RejectReason::MalformedJson,
        format!("binary mode: {}", detail.as_ref()),
    )
}

/// Adds the event's identity (its `source` and `id` attributes, when non-empty) to a rejection.
fn identified(mut r: Rejection, attrs: &[(&str, &str)]) -> Rejection {
    let attr = |name: &str| {
        attrs
            .iter()
            .find(|(n, v)| *n == name && !v.is_empty())
            .map(|(_, v)| v.to_string())
    };
    r.source = r.source.or_else(|| attr("source"));
    r.id = r.id.or_else(|| attr("id"));
    r
}

/// The record gpubill stores for a binary-mode message: its structured record ([`read_headers`],
/// then [`to_structured`]), or, when it cannot be converted, a stand-in that
/// [`crate::events::event::decode_any`] refuses with the same rejection (identity included) and
/// that keeps what was received: the headers that binary mode reads and the body.
pub fn record<'h>(
    binding: Binding,
    headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
    body: &[u8],
) -> Vec<u8> {
    let headers: Vec<(&str, &[u8])> = headers.into_iter().collect();
    let converted = read_headers(binding, headers.iter().copied())
        .and_then(|e| to_structured(&e.attributes, e.content_type.as_deref(), body));
    match converted {
        Ok(record) => record,
        Err(r) => stand_in(
            &with_identity(r, binding, &headers),
            binding,
            &headers,
            body,
        ),
    }
}

/// A rejection made before the attributes were all decoded gets the identity from the
/// `source` and `id` headers that do decode.
fn with_identity(r: Rejection, binding: Binding, headers: &[(&str, &[u8])]) -> Rejection {
    let decoded: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(name, value)| {
            let attr = strip_prefix(binding, name)?.to_ascii_lowercase();
            let value = match binding {
                Binding::Http => decode_http_value(value).ok()?,
                Binding::Kafka => String::from_utf8(value.to_vec()).ok()?,
            };
            Some((attr, value))
        })
        .collect();
    let attrs: Vec<(&str, &str)> = decoded
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    identified(r, &attrs)
}

/// Starts a refused binary-mode message's stand-in; no JSON text starts with `g`.
const REFUSED_MAGIC: &[u8] = b"gpubill-binary-mode-refused\n";

/// What a stand-in holds after [`REFUSED_MAGIC`], as one JSON object: the rejection, the
/// headers binary mode reads as `[name, value]` pairs and the body, as received (lossy
/// UTF-8). Text only, escaped: no NUL byte, which PostgreSQL's `text` (the dead-letter
/// outbox) refuses, even from a body that holds one.
#[derive(serde::Serialize, Deserialize)]
struct StandIn<R> {
    rejection: R,
    headers: Vec<(String, String)>,
    body: String,
}

fn stand_in(r: &Rejection, binding: Binding, headers: &[(&str, &[u8])], body: &[u8]) -> Vec<u8> {
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let kept = StandIn {
        rejection: r,
        headers: headers
            .iter()
            .filter(|(n, _)| {
                strip_prefix(binding, n).is_some() || n.eq_ignore_ascii_case("content-type")
            })
            .map(|(n, v)| (n.to_ascii_lowercase(), lossy(v)))
            .collect(),
        body: lossy(body),
    };
    let mut out = REFUSED_MAGIC.to_vec();
    // Strings and a unit enum always serialize.
    out.extend(serde_json::to_vec(&kept).unwrap_or_default());
    out
}

#[derive(Deserialize)]
struct Refusal {
    reason: RejectReason,
    detail: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

/// The rejection a stand-in made by [`record`] stands for; None for any other record.
pub(crate) fn refused(record: &[u8]) -> Option<Rejection> {
    let kept: StandIn<Refusal> =
        serde_json::from_slice(record.strip_prefix(REFUSED_MAGIC)?).ok()?;
    let r = kept.rejection;
    Some(Rejection {
        reason: r.reason,
        detail: r.detail,
        source: r.source,
        id: r.id,
    })
}

#[cfg(test)]
mod tests;
