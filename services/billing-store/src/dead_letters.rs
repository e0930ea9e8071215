//! The rows a rejected record leaves: its dead letter, and the outbox row that relays it to
//! the dead-letter topic.

use crate::sql::Val;
use billing_core::event::Rejection;

/// The outbox row that sends a dead letter (a row of `dead_row`) to the dead-letter topic:
/// the record as received, its reason and detail in headers, keyed by its source.
pub(crate) fn dead_letter_outbox(topic: &str, dead: &[Val], now_ms: i64) -> Vec<Val> {
    let text = |v: &Val| match v {
        Val::Text(s) => s.clone(),
        Val::OptText(s) => s.clone().unwrap_or_default(),
        Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
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
        Val::Text(r.detail.clone()),
        Val::OptText(r.source.clone()),
        Val::OptText(r.id.clone()),
        Val::Bytes(billing_core::event::kept_payload(raw).to_vec()),
        Val::I64(now_ms),
    ]
}
