//! Notifications as data: what the rules of [`crate::notify`] emit, with their stable event
//! type names. A [`Notice`] is a fact computed from the same state as the invoice; the store
//! writes it to the outbox in the transaction that caused it, under its dedupe `key`, and
//! gives it the account's next sequence number there (`seq` stays `None` in the core).

use crate::common::timestamp::format_secs;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// The event types, as webhooks, the Kafka topic and the API's filters name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum NoticeKind {
    #[serde(rename = "budget.crossed")]
    BudgetCrossed,
    #[serde(rename = "budget.resolved")]
    BudgetResolved,
    #[serde(rename = "balance.low")]
    BalanceLow,
    #[serde(rename = "balance.resolved")]
    BalanceResolved,
    #[serde(rename = "term.expiring")]
    TermExpiring,
    #[serde(rename = "subscription.renewing")]
    SubscriptionRenewing,
    #[serde(rename = "arrears.started")]
    ArrearsStarted,
    #[serde(rename = "arrears.stopped")]
    ArrearsStopped,
    #[serde(rename = "arrears.released")]
    ArrearsReleased,
    #[serde(rename = "arrears.cleared")]
    ArrearsCleared,
    /// The console's "send test event".
    #[serde(rename = "test")]
    Test,
}

/// An event type gpubill does not know (an API filter naming one is a 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown event type {given:?}: the known types are {}",
    NoticeKind::known_list()
)]
pub struct UnknownKind {
    pub given: String,
}

impl NoticeKind {
    /// Every type, in the order the README lists them.
    pub const ALL: [NoticeKind; 11] = [
        NoticeKind::BudgetCrossed,
        NoticeKind::BudgetResolved,
        NoticeKind::BalanceLow,
        NoticeKind::BalanceResolved,
        NoticeKind::TermExpiring,
        NoticeKind::SubscriptionRenewing,
        NoticeKind::ArrearsStarted,
        NoticeKind::ArrearsStopped,
        NoticeKind::ArrearsReleased,
        NoticeKind::ArrearsCleared,
        NoticeKind::Test,
    ];

    /// The stable name (`budget.crossed`).
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::BudgetCrossed => "budget.crossed",
            NoticeKind::BudgetResolved => "budget.resolved",
            NoticeKind::BalanceLow => "balance.low",
            NoticeKind::BalanceResolved => "balance.resolved",
            NoticeKind::TermExpiring => "term.expiring",
            NoticeKind::SubscriptionRenewing => "subscription.renewing",
            NoticeKind::ArrearsStarted => "arrears.started",
            NoticeKind::ArrearsStopped => "arrears.stopped",
            NoticeKind::ArrearsReleased => "arrears.released",
            NoticeKind::ArrearsCleared => "arrears.cleared",
            NoticeKind::Test => "test",
        }
    }

    /// Strict: exactly one of the names of [`NoticeKind::ALL`]; anything else (other case,
    /// spaces, a prefix) is refused with the list of known ones.
    pub fn parse(s: &str) -> Result<NoticeKind, UnknownKind> {
        NoticeKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind {
                given: s.chars().take(64).collect(),
            })
    }

    fn known_list() -> String {
        NoticeKind::ALL.map(NoticeKind::as_str).join(", ")
    }
}

impl std::fmt::Display for NoticeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A quota decision a notice makes due, recorded on the decision stream beside it: the
/// `quota` it moves (`budget:<id>`, `arrears`) and its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionDue {
    pub quota: String,
    pub kind: DecisionKind,
}

/// The kinds of decision the notification rules make. `limit` and `clear` are the quota
/// levels' own words (billing-store `DecisionKind`); `stop` and `release` are the arrears
/// sequence's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// New authorizations are refused (a budget with `action = stop` at 100%).
    Limit,
    /// Instances are stopped, disks kept (billed at the storage rate of section 8).
    Stop,
    /// The rental backend deletes the disks.
    Release,
    /// Lifts an earlier `limit` or `stop`.
    Clear,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Limit => "limit",
            DecisionKind::Stop => "stop",
            DecisionKind::Release => "release",
            DecisionKind::Clear => "clear",
        }
    }
}

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub kind: NoticeKind,
    /// The account it is about and delivered to (its endpoints, then platform endpoints).
    pub account: String,
    /// The dedupe key: the same fact always has the same key, so a replay or a second engine
    /// writing it again is an "exists" in the outbox, never a second notice.
    pub key: String,
    /// When the fact holds, Unix seconds (the evaluation's `now`, or the instant a step of the
    /// arrears sequence was due).
    pub at: i64,
    /// The quota decision due with it, if any.
    pub decision: Option<DecisionDue>,
    /// The event's `data`: decimals as strings, instants RFC 3339.
    pub payload: serde_json::Value,
    /// The per-account sequence number, given by the store when it writes the outbox.
    pub seq: Option<i64>,
}

impl Notice {
    /// The console's "send test event": `nonce` (the request's id) makes the key unique.
    pub fn test(account: &str, at: i64, nonce: &str) -> Notice {
        Notice {
            kind: NoticeKind::Test,
            account: account.to_string(),
            key: format!("test:{account}:{nonce}"),
            at,
            decision: None,
            payload: serde_json::json!({
                "account": account,
                "message": "a test event sent from the console",
                "at": format_secs(at),
            }),
            seq: None,
        }
    }

    /// The JSON body delivered (webhook body and Kafka value): the type, the instant, the
    /// account, the key, the sequence number when the store has given one, and `data`.
    pub fn envelope(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "type": self.kind.as_str(),
            "timestamp": format_secs(self.at),
            "account": self.account,
            "key": self.key,
            "data": self.payload,
        });
        if let (Some(seq), Some(map)) = (self.seq, v.as_object_mut()) {
            map.insert("seq".into(), seq.into());
        }
        v
    }
}

/// A money amount as payloads write it: rounded to the cent, two decimals (`"510.00"`).
pub fn money_text(d: Decimal) -> String {
    crate::common::money::round_amount(d).to_string()
}

/// A percent or a count as payloads and keys write it: no trailing zeros (`"80"`, `"80.5"`).
pub fn plain_text(d: Decimal) -> String {
    d.normalize().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_back_from_its_name_and_serializes_to_it() {
        for k in NoticeKind::ALL {
            assert_eq!(NoticeKind::parse(k.as_str()), Ok(k));
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.as_str().into())
            );
        }
    }

    #[test]
    fn unknown_kind_is_named_with_the_known_list() {
        let e = NoticeKind::parse("Budget.Crossed").unwrap_err();
        assert_eq!(e.given, "Budget.Crossed");
        let text = e.to_string();
        assert!(text.starts_with("unknown event type \"Budget.Crossed\": the known types are"));
        assert!(text.contains("budget.crossed, budget.resolved, balance.low"));
        assert!(text.ends_with("arrears.cleared, test"));
        assert!(NoticeKind::parse("budget.crossed ").is_err());
        assert!(NoticeKind::parse("").is_err());
    }

    #[test]
    fn envelope_carries_seq_only_once_the_store_gave_one() {
        let mut n = Notice::test("acme", 1_790_000_000, "req-1");
        assert_eq!(n.key, "test:acme:req-1");
        assert!(n.envelope().get("seq").is_none());
        n.seq = Some(7);
        let e = n.envelope();
        assert_eq!(e["seq"], 7);
        assert_eq!(e["type"], "test");
        assert_eq!(e["timestamp"], format_secs(1_790_000_000));
    }

    #[test]
    fn money_text_rounds_to_the_cent_with_two_decimals() {
        assert_eq!(money_text(Decimal::from(510)), "510.00");
        assert_eq!(money_text(Decimal::new(12_345, 3)), "12.35");
        assert_eq!(plain_text(Decimal::new(8000, 2)), "80");
    }
}
