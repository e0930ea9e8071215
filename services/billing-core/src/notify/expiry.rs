//! Expiry and renewal reminders (到期提醒): subscriptions without `auto_renew`, packages and
//! credits (vouchers) ending within a window, and an auto-renewing subscription about to
//! renew, flagged when the wallet does not cover the price.
//!
//! The rules (also in [`crate::choices::notify`]): a reminder window of `w` days is open from
//! `end - w x 86,400` until `end`; each (term, its end, window) is reminded at most once. When
//! several windows are open and none was reminded (a term created late, an engine that was
//! down), only the narrowest is sent and the wider ones count as sent, so a customer never
//! gets "7 days left" after "1 day left". A term whose end moves (a renewal with more cycles)
//! is a new term end: its windows remind again.

use crate::common::limits::{MAX_REMINDER_DAYS, MAX_REMINDER_WINDOWS};
use crate::common::timestamp::format_secs;
use crate::notify::notice::{Notice, NoticeKind, money_text};
use crate::pricing::pricebook::{Credit, Package, Subscription};
use crate::pricing::subscriptions::{started_bounds, started_bounds_until};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

const DAY_SECONDS: i64 = 86_400;

/// Reminder windows in days before an end (or a renewal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReminderPolicy {
    pub days: Vec<u32>,
}

impl Default for ReminderPolicy {
    /// A week, three days and a day before.
    fn default() -> Self {
        ReminderPolicy {
            days: vec![7, 3, 1],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReminderPolicyError {
    #[error("days: {0} are more than {MAX_REMINDER_WINDOWS}")]
    TooMany(usize),
    #[error("days[{index}]: {value} is out of range [1, {MAX_REMINDER_DAYS}]")]
    OutOfRange { index: usize, value: u32 },
    #[error("days[{index}]: {value} repeats days[{first}]")]
    Repeated {
        index: usize,
        value: u32,
        first: usize,
    },
}

impl ReminderPolicy {
    /// No windows is allowed (no reminders).
    pub fn validate(&self) -> Result<(), ReminderPolicyError> {
        if self.days.len() > MAX_REMINDER_WINDOWS {
            return Err(ReminderPolicyError::TooMany(self.days.len()));
        }
        for (index, &value) in self.days.iter().enumerate() {
            if !(1..=MAX_REMINDER_DAYS).contains(&value) {
                return Err(ReminderPolicyError::OutOfRange { index, value });
            }
            if let Some(first) = self.days[..index].iter().position(|&d| d == value) {
                return Err(ReminderPolicyError::Repeated {
                    index,
                    value,
                    first,
                });
            }
        }
        Ok(())
    }
}

/// What is reminded of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    Subscription,
    Package,
    Credit,
    /// An auto-renewing subscription's next cycle (`subscription.renewing`).
    Renewal,
}

impl TermKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TermKind::Subscription => "subscription",
            TermKind::Package => "package",
            TermKind::Credit => "credit",
            TermKind::Renewal => "renewal",
        }
    }
}

/// One dated term of an account: it ends (or, for [`TermKind::Renewal`], renews) at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dated {
    pub kind: TermKind,
    pub id: String,
    pub account: String,
    pub at: i64,
    /// A renewal's price per cycle.
    pub price: Option<Decimal>,
    /// What is left, when the caller knows (a package's unit-seconds, a credit's amount).
    pub remaining: Option<Decimal>,
}

/// A package ends at its `to`.
pub fn package_term(p: &Package) -> Dated {
    Dated {
        kind: TermKind::Package,
        id: p.id.clone(),
        account: p.account.clone(),
        at: p.to,
        price: None,
        remaining: None,
    }
}

/// A credit with a `to` ends there (one without never expires); a credit without `id` is
/// named by its position in the book, `#index`.
pub fn credit_term(c: &Credit) -> Option<Dated> {
    Some(Dated {
        kind: TermKind::Credit,
        id: c.id.clone().unwrap_or_else(|| format!("#{}", c.index)),
        account: c.account.clone(),
        at: c.to?,
        price: None,
        remaining: None,
    })
}

/// A subscription's next date at `now`, in `tz` (its region's book's): without
/// `auto_renew`, its end (the last cycle's end, or `end` when earlier); with it, the start
/// of its next cycle when one starts (a renewal at `price`), else its end (an `end` is set).
/// `None` for an auto-renewing plan not yet started or already over.
pub fn subscription_term(s: &Subscription, tz: Tz, now: i64) -> Option<Dated> {
    let dated = |kind, at, price| Dated {
        kind,
        id: s.id.clone(),
        account: s.account.clone(),
        at,
        price,
        remaining: None,
    };
    let cap = |at: i64| s.end.map_or(at, |e| at.min(e));
    if !s.auto_renew {
        let last = *started_bounds(s, tz).last()?;
        return Some(dated(TermKind::Subscription, cap(last), None));
    }
    let bounds = started_bounds_until(s, tz, now.saturating_add(1));
    let started = bounds[..bounds.len() - 1]
        .iter()
        .filter(|&&b| b <= now)
        .count();
    let k = started.checked_sub(1)?;
    let next = *bounds.get(k + 1)?;
    if now >= cap(next) {
        return None;
    }
    let renews = k + 1 < s.cycles as usize && s.end.is_none_or(|e| next < e);
    Some(match renews {
        true => dated(TermKind::Renewal, next, Some(s.price)),
        false => dated(TermKind::Subscription, cap(next), None),
    })
}

/// One reminder sent (or skipped for a narrower one): the term, its date, the window.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Sent {
    pub kind: TermKind,
    pub id: String,
    pub at: i64,
    pub days: u32,
}

/// The reminders sent per account; entries of dates passed are dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpiryState {
    pub sent: BTreeSet<Sent>,
}

/// The reminders due at `now` for `terms` (one account's), and the next state. Notices are
/// ordered by the term's date, then kind, then id. `wallet` is what the account can spend
/// ([`crate::quota::prepaid_available`]); a renewal's reminder says whether it covers the
/// price.
pub fn reminders(
    policy: &ReminderPolicy,
    terms: &[Dated],
    wallet: Decimal,
    state: &ExpiryState,
    now: i64,
) -> (ExpiryState, Vec<Notice>) {
    let mut st = state.clone();
    st.sent.retain(|s| s.at > now);
    let mut sorted: Vec<&Dated> = terms.iter().filter(|t| t.at > now).collect();
    sorted.sort_by(|a, b| (a.at, a.kind, &a.id).cmp(&(b.at, b.kind, &b.id)));
    let mut out = Vec::new();
    for t in sorted {
        let open: Vec<u32> = policy
            .days
            .iter()
            .copied()
            .filter(|&w| now >= t.at.saturating_sub(i64::from(w) * DAY_SECONDS))
            .collect();
        let Some(&narrowest) = open.iter().min() else {
            continue;
        };
        let sent = |days| Sent {
            kind: t.kind,
            id: t.id.clone(),
            at: t.at,
            days,
        };
        if !st.sent.contains(&sent(narrowest)) {
            out.push(notice(t, narrowest, wallet, now));
        }
        st.sent.extend(open.into_iter().map(sent));
    }
    (st, out)
}

/// `term.expiring` (key `term:{kind}:{id}:{end}:{w}d`) or `subscription.renewing` (key
/// `subscription:{id}:{renews_at}:renewing:{w}d`).
fn notice(t: &Dated, days: u32, wallet: Decimal, now: i64) -> Notice {
    let seconds_left = t.at - now;
    let days_left = (seconds_left + DAY_SECONDS - 1) / DAY_SECONDS;
    let (kind, key, mut payload) = match t.kind {
        TermKind::Renewal => {
            let price = t.price.unwrap_or_default();
            let payload = serde_json::json!({
                "subscription": t.id,
                "renews_at": format_secs(t.at),
                "price": money_text(price),
                "wallet": money_text(wallet),
                "wallet_covers": wallet >= price,
            });
            let key = format!("subscription:{}:{}:renewing:{days}d", t.id, t.at);
            (NoticeKind::SubscriptionRenewing, key, payload)
        }
        _ => {
            let payload = serde_json::json!({
                "term": t.kind.as_str(),
                "id": t.id,
                "ends_at": format_secs(t.at),
            });
            let key = format!("term:{}:{}:{}:{days}d", t.kind.as_str(), t.id, t.at);
            (NoticeKind::TermExpiring, key, payload)
        }
    };
    if let Some(map) = payload.as_object_mut() {
        map.insert("window_days".into(), days.into());
        map.insert("days_left".into(), days_left.into());
        if let Some(r) = t.remaining {
            map.insert("remaining".into(), r.normalize().to_string().into());
        }
    }
    Notice {
        kind,
        account: t.account.clone(),
        key,
        at: now,
        decision: None,
        payload,
        seq: None,
    }
}

#[cfg(test)]
mod tests;
