//! The evaluation of a budget ([`crate::notify::budget`]'s rules): from the previous state and
//! one observation to the next state and the notices, exactly one per crossing and per
//! resolution. Evaluating the same observation again emits nothing (the state is a fixed
//! point), so a batch redelivered or replayed adds no notice.

use crate::notify::budget::{
    Budget, BudgetAction, BudgetEvaluation, BudgetObservation, BudgetState, Mark, Measure,
    PeriodRef, ResolveReason, cross_line, forecast, resolve_line,
};
use crate::notify::notice::{
    DecisionDue, DecisionKind, Notice, NoticeKind, money_text, plain_text,
};
use rust_decimal::Decimal;
use std::cmp::Reverse;

/// Evaluates `budget` at one observation. An observation of a period earlier than the
/// state's (a late batch of a closed period) changes nothing; one of a later period first
/// resolves every threshold still crossed in the state's period ([`ResolveReason::PeriodEnded`]),
/// then starts the new period from no mark.
pub fn evaluate(
    budget: &Budget,
    state: &BudgetState,
    obs: &BudgetObservation<'_>,
) -> BudgetEvaluation {
    let fc = if budget.forecast {
        forecast(obs.cost, obs.burn_rate_per_second, obs.period, obs.now)
    } else {
        obs.cost
    };
    if state
        .period
        .as_ref()
        .is_some_and(|p| obs.period.start < p.start)
    {
        return BudgetEvaluation {
            state: state.clone(),
            notices: Vec::new(),
            forecast: fc,
        };
    }
    let mut st = state.clone();
    let mut notices = Vec::new();
    if st
        .period
        .as_ref()
        .is_some_and(|p| p.start != obs.period.start)
    {
        notices = end_period(budget, &mut st, obs.now);
    }
    st.period = Some(PeriodRef::of(obs.period));
    st.cost = obs.cost;
    st.forecast = fc;
    notices.extend(evaluate_marks(budget, &mut st, obs.now));
    BudgetEvaluation {
        state: st,
        notices,
        forecast: fc,
    }
}

/// Resolves every crossed mark of the state's period (highest first), clears its limit, and
/// empties the marks.
fn end_period(budget: &Budget, st: &mut BudgetState, now: i64) -> Vec<Notice> {
    let mut out = Vec::new();
    let Some(period) = st.period.clone() else {
        return out;
    };
    let mut crossed: Vec<Mark> = st.marks.iter().filter(|m| m.crossed).cloned().collect();
    crossed.sort_by_key(|m| (Reverse(m.threshold), m.measure));
    for mut m in crossed {
        m.crossed = false;
        let decision = take_limit(st, &m);
        let values = (st.cost, st.forecast);
        let reason = Some(ResolveReason::PeriodEnded);
        out.push(mark_notice(
            budget, &period, &m, values, reason, decision, now,
        ));
    }
    st.marks.clear();
    out
}

/// Crossings and resolutions of this period's marks: resolutions first (highest threshold
/// first, actual before forecast), then crossings (lowest first, forecast before actual).
fn evaluate_marks(budget: &Budget, st: &mut BudgetState, now: i64) -> Vec<Notice> {
    let Some(period) = st.period.clone() else {
        return Vec::new();
    };
    let mut thresholds: Vec<Decimal> = budget.thresholds.iter().map(|t| t.normalize()).collect();
    thresholds.sort();
    for &t in &thresholds {
        for measure in [Measure::Actual, Measure::Forecast] {
            if !st
                .marks
                .iter()
                .any(|m| m.threshold == t && m.measure == measure)
            {
                st.marks.push(Mark {
                    measure,
                    threshold: t,
                    crossed: false,
                    crossings: 0,
                });
            }
        }
    }
    st.marks.sort_by_key(|m| (m.threshold, m.measure));
    let values = (st.cost, st.forecast);
    let mut resolved: Vec<(Reverse<Decimal>, Measure, Notice)> = Vec::new();
    let mut crossed: Vec<(Decimal, Reverse<Measure>, Notice)> = Vec::new();
    for i in 0..st.marks.len() {
        let m = st.marks[i].clone();
        let active =
            thresholds.contains(&m.threshold) && (m.measure == Measure::Actual || budget.forecast);
        let value = match m.measure {
            Measure::Actual => values.0,
            Measure::Forecast => values.1,
        };
        let mut next = m.clone();
        let reason = if m.crossed && !active {
            Some(ResolveReason::Removed)
        } else if m.crossed && value < resolve_line(budget.amount, m.threshold) {
            Some(ResolveReason::Below)
        } else {
            None
        };
        if let Some(reason) = reason {
            next.crossed = false;
            let decision = take_limit(st, &next);
            let n = mark_notice(budget, &period, &next, values, Some(reason), decision, now);
            resolved.push((Reverse(m.threshold), m.measure, n));
        } else if active && !m.crossed && value >= cross_line(budget.amount, m.threshold) {
            next.crossed = true;
            next.crossings += 1;
            let decision = give_limit(budget, st, &next);
            let n = mark_notice(budget, &period, &next, values, None, decision, now);
            crossed.push((m.threshold, Reverse(m.measure), n));
        }
        st.marks[i] = next;
    }
    resolved.sort_by_key(|r| (r.0, r.1));
    crossed.sort_by_key(|c| (c.0, c.1));
    let resolved = resolved.into_iter().map(|r| r.2);
    resolved.chain(crossed.into_iter().map(|c| c.2)).collect()
}

fn is_stop_mark(m: &Mark) -> bool {
    m.measure == Measure::Actual && m.threshold == Decimal::ONE_HUNDRED
}

/// The `limit` due when the actual 100% mark crosses with `action = stop` (none when one is
/// already in force).
fn give_limit(budget: &Budget, st: &mut BudgetState, m: &Mark) -> Option<DecisionKind> {
    let due = is_stop_mark(m) && budget.action == BudgetAction::Stop && !st.limited;
    st.limited |= due;
    due.then_some(DecisionKind::Limit)
}

/// The `clear` due when the actual 100% mark resolves while this budget's limit is in force
/// (whatever the action is now: a limit is always lifted by the resolution).
fn take_limit(st: &mut BudgetState, m: &Mark) -> Option<DecisionKind> {
    let due = is_stop_mark(m) && st.limited;
    st.limited &= !due;
    due.then_some(DecisionKind::Clear)
}

/// The notice of one crossing (`reason` none) or resolution of `m` (its `crossings` already
/// counted): key `budget:{id}:{period}:{threshold}:{measure}:{crossed|resolved}#{n}`.
fn mark_notice(
    budget: &Budget,
    period: &PeriodRef,
    m: &Mark,
    (cost, fc): (Decimal, Decimal),
    reason: Option<ResolveReason>,
    decision: Option<DecisionKind>,
    now: i64,
) -> Notice {
    let t = plain_text(m.threshold);
    let (kind, word) = match reason {
        None => (NoticeKind::BudgetCrossed, "crossed"),
        Some(_) => (NoticeKind::BudgetResolved, "resolved"),
    };
    let decision = decision.map(|kind| DecisionDue {
        quota: format!("budget:{}", budget.id),
        kind,
    });
    let mut payload = serde_json::json!({
        "budget": budget.id,
        "scope": budget.scope,
        "period": {
            "label": period.label,
            "start": crate::common::timestamp::format_secs(period.start),
            "end": crate::common::timestamp::format_secs(period.end),
        },
        "measure": m.measure.as_str(),
        "threshold_percent": t,
        "threshold_amount": money_text(cross_line(budget.amount, m.threshold)),
        "amount": money_text(budget.amount),
        "cost": money_text(cost),
        "forecast": money_text(fc),
        "action": budget.action,
    });
    if let Some(map) = payload.as_object_mut() {
        if let Some(r) = reason {
            map.insert("reason".into(), serde_json::json!(r));
        }
        if let Some(d) = &decision {
            map.insert("decision".into(), d.kind.as_str().into());
        }
    }
    Notice {
        kind,
        account: budget.account.clone(),
        key: format!(
            "budget:{}:{}:{t}:{}:{word}#{}",
            budget.id,
            period.label,
            m.measure.as_str(),
            m.crossings
        ),
        at: now,
        decision,
        payload,
        seq: None,
    }
}

#[cfg(test)]
mod tests;
