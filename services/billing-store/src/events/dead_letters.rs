//! The rows a rejected record leaves: its dead letter, and the outbox row that relays it to
//! the dead-letter topic.

use crate::conn::sql::Val;
use billing_core::event::Rejection;

/// The outbox row that sends a dead letter (a row of `dead_row`) to the dead-letter topic:
/// the record as received, its reason and detail in headers, keyed by its source.
pub(crate) fn dead_letter_outbox(topic: &str, dead: &[Val], now_ms: i64) -> Vec<Val> {
    // Text columns and Kafka headers cannot hold a NUL (PostgreSQL refuses it): the relayed
    // copy shows U+FFFD there; the dead letter itself keeps the bytes as received.
    let text = |v: &Val| {
        match v {
            Val::Text(s) => s.clone(),
            Val::OptText(s) => s.clone().unwrap_or_default(),
            Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        }
        .replace('\0', "\u{fffd}")
    };
    let headers =
        serde_json::json!({ "gpubill-reason": text(&dead[1]), "gpubill-detail": text(&dead[2]) });
    vec![
        Val::Text(topic.to_string()),
        Val::Text(text(&dead[3])),
        Val::Text(text(&dead[5])),
        Val::I64(now_ms),
        Val::Text(headers.to_string()),
    ]
}

pub(crate) fn dead_row(seq: i64, r: &Rejection, raw: &[u8], now_ms: i64) -> Vec<Val> {
    vec![
        Val::OptI64(Some(seq)),
        Val::Text(r.reason.as_str().to_string()),
        Val::Text(no_nul(&r.detail)),
        Val::OptText(r.source.as_deref().map(no_nul)),
        Val::OptText(r.id.as_deref().map(no_nul)),
        Val::Bytes(billing_core::event::kept_payload(raw).to_vec()),
        Val::I64(now_ms),
    ]
}

/// A text column's copy of `s`: a NUL (which PostgreSQL's text refuses) as U+FFFD.
fn no_nul(s: &str) -> String {
    s.replace('\0', "\u{fffd}")
}
