//! Budgets (issue 28): an amount per period on an account, an organization node (its
//! subtree) or a project tag, with thresholds on the actual cost and on the forecast. The
//! evaluation is a pure function of the budget, its previous [`BudgetState`] and one
//! [`BudgetObservation`]; it returns the next state and the notices, so the store can run it
//! in the batch's transaction and a replay computes the same notices again.
//!
//! The rules (also in [`crate::choices::notify`]):
//! - threshold `t` (percent) is **crossed** when the measured value is at or over
//!   `amount x t / 100`;
//! - it is **resolved** when the value falls below `amount x (t - h) / 100`, with the
//!   hysteresis `h = min(2, t / 2)` percentage points ([`resolve_line`]), or when the period
//!   ends, or when the threshold (or the forecast) is taken off the budget;
//! - forecast `= cost + burn_rate_per_second x (end - now)`, `now` clamped into the period
//!   ([`forecast`]);
//! - with `action = stop`, the actual crossing of 100% makes a `limit` decision due, and its
//!   resolution a `clear`.

use crate::common::limits::{MAX_BUDGET_THRESHOLD_PERCENT, MAX_BUDGET_THRESHOLDS};
use crate::common::text::{NameError, check_name};
use crate::notify::notice::Notice;
use crate::pricing::period::Period;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// What a budget measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetScope {
    /// One account's own cost (a payer's: its invoice).
    Account(String),
    /// An organization node: the cost allocated to its subtree (issue 27).
    Node(String),
    /// The cost allocated to one value of a project tag (section 18's `allocation_tag`).
    Tag { tag: String, value: String },
}

/// What a budget does at 100%.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAction {
    Notify,
    /// Also a quota decision `limit` (new authorizations refused) until it resolves.
    Stop,
}

/// A budget, owned by `account` (who is notified).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    pub id: String,
    pub account: String,
    pub scope: BudgetScope,
    /// Per period, in the account's currency.
    pub amount: Decimal,
    /// Percents of `amount`, each in `(0, 1000]`, at most 2 decimals, no two equal.
    pub thresholds: Vec<Decimal>,
    /// Also evaluate every threshold against the forecast.
    pub forecast: bool,
    pub action: BudgetAction,
}

/// Why a budget is refused; each message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error("{field}: not a valid name")]
    Name {
        field: &'static str,
        #[source]
        source: NameError,
    },
    #[error("amount: {0} must be positive")]
    AmountNotPositive(Decimal),
    #[error("amount: {0} has more than 2 decimals")]
    AmountNotMoney(Decimal),
    #[error("thresholds: at least one is needed")]
    NoThresholds,
    #[error("thresholds: {0} are more than {MAX_BUDGET_THRESHOLDS}")]
    TooManyThresholds(usize),
    #[error("thresholds[{index}]: {value} is out of range (0, {MAX_BUDGET_THRESHOLD_PERCENT}]")]
    ThresholdOutOfRange { index: usize, value: Decimal },
    #[error("thresholds[{index}]: {value} has more than 2 decimals")]
    ThresholdPrecision { index: usize, value: Decimal },
    #[error("thresholds[{index}]: {value} repeats thresholds[{first}]")]
    ThresholdRepeated {
        index: usize,
        value: Decimal,
        first: usize,
    },
    #[error("action: stop needs a threshold of 100")]
    StopWithout100,
}

impl Budget {
    /// Checks every field; the first problem found is the error.
    pub fn validate(&self) -> Result<(), BudgetError> {
        let name = |field: &'static str, v: &str| {
            check_name(v).map_err(|source| BudgetError::Name { field, source })
        };
        name("id", &self.id)?;
        name("account", &self.account)?;
        match &self.scope {
            BudgetScope::Account(a) => name("scope.account", a)?,
            BudgetScope::Node(n) => name("scope.node", n)?,
            BudgetScope::Tag { tag, value } => {
                name("scope.tag", tag)?;
                // The empty tag value is section 18's "untagged" row: allowed.
                if !value.is_empty() {
                    name("scope.value", value)?;
                }
            }
        }
        if self.amount <= Decimal::ZERO {
            return Err(BudgetError::AmountNotPositive(self.amount));
        }
        if crate::common::decimal::check_money(self.amount).is_err() {
            return Err(BudgetError::AmountNotMoney(self.amount));
        }
        self.validate_thresholds()?;
        if self.action == BudgetAction::Stop && !self.thresholds.contains(&Decimal::ONE_HUNDRED) {
            return Err(BudgetError::StopWithout100);
        }
        Ok(())
    }

    fn validate_thresholds(&self) -> Result<(), BudgetError> {
        let t = &self.thresholds;
        if t.is_empty() {
            return Err(BudgetError::NoThresholds);
        }
        if t.len() > MAX_BUDGET_THRESHOLDS {
            return Err(BudgetError::TooManyThresholds(t.len()));
        }
        for (index, &value) in t.iter().enumerate() {
            if value <= Decimal::ZERO || value > MAX_BUDGET_THRESHOLD_PERCENT {
                return Err(BudgetError::ThresholdOutOfRange { index, value });
            }
            if value.normalize().scale() > 2 {
                return Err(BudgetError::ThresholdPrecision { index, value });
            }
            if let Some(first) = t[..index].iter().position(|&p| p == value) {
                return Err(BudgetError::ThresholdRepeated {
                    index,
                    value,
                    first,
                });
            }
        }
        Ok(())
    }
}

/// Which value a threshold is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Actual,
    Forecast,
}

impl Measure {
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Actual => "actual",
            Measure::Forecast => "forecast",
        }
    }
}

/// Where one threshold of one measure stands in the state's period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    pub measure: Measure,
    /// Percent, normalized.
    pub threshold: Decimal,
    pub crossed: bool,
    /// How many times it was crossed in the period: crossing `n` and its resolution carry
    /// `#n` in their keys.
    pub crossings: u32,
}

/// A period as a state remembers it: `[start, end)` and its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodRef {
    pub label: String,
    pub start: i64,
    pub end: i64,
}

impl PeriodRef {
    pub fn of(p: &Period) -> PeriodRef {
        PeriodRef {
            label: p.label.clone(),
            start: p.start,
            end: p.end,
        }
    }
}

/// What a budget's evaluation carries to the next one (the store keeps it per budget).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetState {
    /// The period the marks belong to (`None` before the first evaluation).
    pub period: Option<PeriodRef>,
    /// Sorted by threshold, then measure (actual first).
    pub marks: Vec<Mark>,
    /// A `limit` decision is in force (made by this budget, not yet cleared).
    pub limited: bool,
    /// The last evaluation's cost and forecast (the period-end resolutions show them).
    pub cost: Decimal,
    pub forecast: Decimal,
}

/// One evaluation's inputs: the period `[start, end)`, the cost of the budget's scope in it
/// so far (the provisional figure a quota measures), the burn rate and the instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetObservation<'a> {
    pub period: &'a Period,
    pub cost: Decimal,
    /// [`crate::notify::burn::burn_rate_per_second`] of the scope.
    pub burn_rate_per_second: Decimal,
    pub now: i64,
}

/// What [`crate::notify::budget_eval::evaluate`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetEvaluation {
    pub state: BudgetState,
    /// In the order of [`crate::choices::notify`]: the ended period's resolutions, then this
    /// period's resolutions (highest threshold first, actual before forecast), then its
    /// crossings (lowest first, forecast before actual).
    pub notices: Vec<Notice>,
    /// The forecast computed (equal to the cost when the budget has no forecast).
    pub forecast: Decimal,
}

/// The period's forecast: `cost + max(0, burn) x (end - now')`, with `now'` = `now` clamped
/// into `[start, end]` (before the period, its whole length is left; after it, nothing).
pub fn forecast(
    cost: Decimal,
    burn_rate_per_second: Decimal,
    period: &Period,
    now: i64,
) -> Decimal {
    let left = period.end - now.clamp(period.start, period.end);
    cost + burn_rate_per_second.max(Decimal::ZERO) * Decimal::from(left.max(0))
}

/// `amount x t / 100`: where threshold `t` is crossed (at or over).
pub fn cross_line(amount: Decimal, threshold: Decimal) -> Decimal {
    amount * threshold / Decimal::ONE_HUNDRED
}

/// `amount x (t - min(2, t / 2)) / 100`: a crossed threshold resolves strictly below it.
pub fn resolve_line(amount: Decimal, threshold: Decimal) -> Decimal {
    let margin = Decimal::TWO.min(threshold / Decimal::TWO);
    amount * (threshold - margin) / Decimal::ONE_HUNDRED
}

/// Why a crossed threshold resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolveReason {
    /// The value fell below [`resolve_line`] (a credit, an adjustment, a lower forecast).
    Below,
    /// The period ended: the next one starts from nothing.
    PeriodEnded,
    /// The threshold, or the forecast, was taken off the budget.
    Removed,
}

#[cfg(test)]
mod tests;
