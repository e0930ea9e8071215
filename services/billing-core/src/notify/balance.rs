//! A low prepaid balance (余额不足提醒): by amount, or by the hours left at the current burn
//! rate (余额可用约 N 小时), each with hysteresis and a `balance.resolved` after a top-up.
//!
//! The rules (also in [`crate::choices::notify`]):
//! - **amount**: low when `balance < low_amount`; resolved when `balance >= low_amount x 1.1`;
//! - **hours**: `hours_left = balance / (burn_rate_per_second x 3600)` ([`hours_left`]); low
//!   when `hours_left < low_hours`, resolved when `hours_left >= low_hours x 1.1`. With no
//!   usage running (burn rate 0) the hours are unknown and the condition keeps its state, so
//!   stopping and starting an instance does not flap it; a balance at or below zero has 0
//!   hours left whatever the rate;
//! - a condition taken off the settings while low resolves.

use crate::notify::notice::{Notice, NoticeKind, money_text, plain_text};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// The most hours a low-hours alert looks ahead: a year.
pub const MAX_LOW_HOURS: Decimal = Decimal::from_parts(8784, 0, 0, false, 0);

/// A resolution needs the value back at `1.1 x` its line.
pub const RESOLVE_FACTOR: Decimal = Decimal::from_parts(11, 0, 0, false, 1);

/// An account's low-balance settings (both optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalanceAlert {
    pub low_amount: Option<Decimal>,
    pub low_hours: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BalanceAlertError {
    #[error("low_amount: {0} must be positive with at most 2 decimals")]
    LowAmount(Decimal),
    #[error("low_hours: {0} is out of range (0, {MAX_LOW_HOURS}]")]
    LowHours(Decimal),
}

impl BalanceAlert {
    pub fn validate(&self) -> Result<(), BalanceAlertError> {
        if let Some(a) = self.low_amount
            && (a <= Decimal::ZERO || crate::common::decimal::check_money(a).is_err())
        {
            return Err(BalanceAlertError::LowAmount(a));
        }
        if let Some(h) = self.low_hours
            && (h <= Decimal::ZERO || h > MAX_LOW_HOURS)
        {
            return Err(BalanceAlertError::LowHours(h));
        }
        Ok(())
    }
}

/// The two conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    Amount,
    Hours,
}

impl Condition {
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::Amount => "amount",
            Condition::Hours => "hours",
        }
    }
}

/// One condition's state: low now, and how many times it went low (keys carry `#n`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    pub low: bool,
    pub times: u32,
}

/// What the evaluation carries to the next one (the store keeps it per account).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalanceState {
    pub amount: Flag,
    pub hours: Flag,
}

/// One observation: the balance the customer can still spend
/// ([`crate::quota::prepaid_available`]) and the burn rate
/// ([`crate::notify::burn::burn_rate_per_second`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceObservation {
    pub balance: Decimal,
    pub burn_rate_per_second: Decimal,
    pub now: i64,
}

/// `balance / (burn_rate_per_second x 3600)`: `None` when nothing burns, 0 when the balance
/// is at or below zero.
pub fn hours_left(balance: Decimal, burn_rate_per_second: Decimal) -> Option<Decimal> {
    if balance <= Decimal::ZERO {
        return Some(Decimal::ZERO);
    }
    (burn_rate_per_second > Decimal::ZERO)
        .then(|| balance / (burn_rate_per_second * Decimal::from(3600)))
}

/// "余额可用约 N 小时", `N` the hours left rounded down to one decimal.
pub fn hours_message(hours: Decimal) -> String {
    let n = hours.round_dp_with_strategy(1, RoundingStrategy::ToZero);
    format!("余额可用约 {} 小时", plain_text(n))
}

/// Evaluates both conditions: resolutions first, then lows; amount before hours.
pub fn evaluate(
    account: &str,
    alert: &BalanceAlert,
    state: &BalanceState,
    obs: &BalanceObservation,
) -> (BalanceState, Vec<Notice>) {
    let hours = hours_left(obs.balance, obs.burn_rate_per_second);
    let amount_is = alert.low_amount.map(|line| {
        if obs.balance < line {
            Some(true)
        } else {
            Some(obs.balance < line * RESOLVE_FACTOR).filter(|&still| !still)
        }
    });
    let hours_is = alert.low_hours.map(|line| match hours {
        None => None,
        Some(h) if h < line => Some(true),
        Some(h) => Some(h < line * RESOLVE_FACTOR).filter(|&still| !still),
    });
    let mut st = *state;
    let mut resolved = Vec::new();
    let mut low = Vec::new();
    for (cond, flag, is) in [
        (Condition::Amount, &mut st.amount, amount_is),
        (Condition::Hours, &mut st.hours, hours_is),
    ] {
        // `is`: None = the condition is off; Some(None) = no news (inside the hysteresis, or
        // no burn rate); Some(Some(true)) = low; Some(Some(false)) = clear.
        let now_low = match is {
            None => false,
            Some(None) => flag.low,
            Some(Some(v)) => v,
        };
        if now_low && !flag.low {
            flag.low = true;
            flag.times += 1;
            low.push(notice(account, alert, obs, hours, cond, *flag));
        } else if !now_low && flag.low {
            flag.low = false;
            resolved.push(notice(account, alert, obs, hours, cond, *flag));
        }
    }
    resolved.extend(low);
    (st, resolved)
}

fn notice(
    account: &str,
    alert: &BalanceAlert,
    obs: &BalanceObservation,
    hours: Option<Decimal>,
    cond: Condition,
    flag: Flag,
) -> Notice {
    let (kind, word) = match flag.low {
        true => (NoticeKind::BalanceLow, "low"),
        false => (NoticeKind::BalanceResolved, "resolved"),
    };
    let mut payload = serde_json::json!({
        "account": account,
        "condition": cond.as_str(),
        "balance": money_text(obs.balance),
        "burn_rate_per_hour": money_text(obs.burn_rate_per_second * Decimal::from(3600)),
    });
    if let Some(map) = payload.as_object_mut() {
        if let Some(a) = alert.low_amount {
            map.insert("low_amount".into(), money_text(a).into());
        }
        if let Some(h) = alert.low_hours {
            map.insert("low_hours".into(), plain_text(h).into());
        }
        if let Some(h) = hours {
            let shown = h.round_dp_with_strategy(1, RoundingStrategy::ToZero);
            map.insert("hours_left".into(), plain_text(shown).into());
            map.insert("message".into(), hours_message(h).into());
        }
    }
    Notice {
        kind,
        account: account.to_string(),
        key: format!("balance:{account}:{}:{word}#{}", cond.as_str(), flag.times),
        at: obs.now,
        decision: None,
        payload,
        seq: None,
    }
}

#[cfg(test)]
mod tests;
