//! The arrears sequence (欠费停机 → 释放), per account: a state machine driven by what the
//! store observes (the balance, whether an invoice is overdue) and by `now`.
//!
//! ```text
//! clear --(balance < 0 or an invoice overdue)--> started          arrears.started
//! started --(since + grace_secs)--------------> stopped           arrears.stopped   (stop)
//! stopped --(stopped_at + release_after_secs)-> released          arrears.released  (release)
//! started | stopped | released --(balance >= 0 and nothing overdue)--> clear
//!                                                                  arrears.cleared   (clear,
//!                                                                  when stopped or released)
//! ```
//!
//! A step due in the past is taken at the instant it was due (a late timer or a replay does
//! not move the schedule), so one [`step`] may take several. A top-up before a step cancels
//! it: the next observation clears the sequence. [`step`] is idempotent: the state it returns
//! is a fixed point for the same observation and `now`.

use crate::common::limits::MAX_ARREARS_STEP_SECONDS;
use crate::common::timestamp::format_secs;
use crate::notify::notice::{DecisionDue, DecisionKind, Notice, NoticeKind, money_text};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// The sequence's timing, per account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrearsPolicy {
    /// From `arrears.started` to the stop.
    pub grace_secs: i64,
    /// From the stop to the release of the disks.
    pub release_after_secs: i64,
}

/// A day of grace, then 15 days stopped before the release (Alibaba Cloud's default keeps
/// the disks of a stopped pay-as-you-go instance 15 days).
pub const DEFAULT_ARREARS_POLICY: ArrearsPolicy = ArrearsPolicy {
    grace_secs: 86_400,
    release_after_secs: 15 * 86_400,
};

impl Default for ArrearsPolicy {
    fn default() -> Self {
        DEFAULT_ARREARS_POLICY
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrearsPolicyError {
    #[error("{field}: {value} is out of range [0, {MAX_ARREARS_STEP_SECONDS}]")]
    OutOfRange { field: &'static str, value: i64 },
}

impl ArrearsPolicy {
    pub fn validate(&self) -> Result<(), ArrearsPolicyError> {
        for (field, value) in [
            ("grace_secs", self.grace_secs),
            ("release_after_secs", self.release_after_secs),
        ] {
            if !(0..=MAX_ARREARS_STEP_SECONDS).contains(&value) {
                return Err(ArrearsPolicyError::OutOfRange { field, value });
            }
        }
        Ok(())
    }
}

/// Where an account is in the sequence (instants in Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    Clear,
    Started {
        since: i64,
    },
    Stopped {
        since: i64,
        stopped_at: i64,
    },
    Released {
        since: i64,
        stopped_at: i64,
        released_at: i64,
    },
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Clear => "clear",
            Phase::Started { .. } => "started",
            Phase::Stopped { .. } => "stopped",
            Phase::Released { .. } => "released",
        }
    }
}

/// An account's arrears state; `episode` counts the sequences started (keys carry it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrearsState {
    pub account: String,
    pub episode: u32,
    pub phase: Phase,
}

impl ArrearsState {
    /// An account never in arrears.
    pub fn new(account: &str) -> ArrearsState {
        ArrearsState {
            account: account.to_string(),
            episode: 0,
            phase: Phase::Clear,
        }
    }
}

/// What the store observes of the account: its balance (the prepaid wallet less what is
/// used, [`crate::quota::prepaid_available`]) and whether an invoice of it is overdue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    pub balance: Decimal,
    pub overdue: bool,
}

impl Observed {
    /// In arrears: the balance below zero or an invoice overdue.
    pub fn in_arrears(&self) -> bool {
        self.balance < Decimal::ZERO || self.overdue
    }
}

/// The steps of the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Start,
    Stop,
    Release,
    Clear,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Start => "start",
            Step::Stop => "stop",
            Step::Release => "release",
            Step::Clear => "clear",
        }
    }
}

/// What happens next by the clock, and when (for the console and the engine's timer): the
/// stop at `since + grace_secs`, the release at `stopped_at + release_after_secs`; nothing
/// when clear (only an observation starts a sequence) or released.
pub fn next_due(state: &ArrearsState, policy: &ArrearsPolicy) -> Option<(i64, Step)> {
    match state.phase {
        Phase::Started { since } => Some((since.saturating_add(policy.grace_secs), Step::Stop)),
        Phase::Stopped { stopped_at, .. } => Some((
            stopped_at.saturating_add(policy.release_after_secs),
            Step::Release,
        )),
        Phase::Clear | Phase::Released { .. } => None,
    }
}

/// One observation at `now`: starts, advances (every step due by `now`, each at its own
/// instant) or clears the sequence, returning the next state and the notices in the order
/// the steps happened.
pub fn step(
    state: &ArrearsState,
    policy: &ArrearsPolicy,
    observed: &Observed,
    now: i64,
) -> (ArrearsState, Vec<Notice>) {
    let mut st = state.clone();
    let mut out = Vec::new();
    if !observed.in_arrears() {
        if st.phase != Phase::Clear {
            let lifts = matches!(st.phase, Phase::Stopped { .. } | Phase::Released { .. });
            let was = st.phase;
            st.phase = Phase::Clear;
            let decision = lifts.then_some(DecisionKind::Clear);
            out.push(notice(
                &st,
                policy,
                observed,
                Step::Clear,
                now,
                decision,
                Some(was),
            ));
        }
        return (st, out);
    }
    if st.phase == Phase::Clear {
        st.episode += 1;
        st.phase = Phase::Started { since: now };
        out.push(notice(&st, policy, observed, Step::Start, now, None, None));
    }
    while let Some((at, due)) = next_due(&st, policy).filter(|&(at, _)| at <= now) {
        let decision = match (st.phase, due) {
            (Phase::Started { since }, Step::Stop) => {
                st.phase = Phase::Stopped {
                    since,
                    stopped_at: at,
                };
                DecisionKind::Stop
            }
            (Phase::Stopped { since, stopped_at }, Step::Release) => {
                st.phase = Phase::Released {
                    since,
                    stopped_at,
                    released_at: at,
                };
                DecisionKind::Release
            }
            // next_due gives only the two above.
            _ => break,
        };
        out.push(notice(&st, policy, observed, due, at, Some(decision), None));
    }
    (st, out)
}

/// The notice of `step` taken at `at` (`st` already the state after it): key
/// `arrears:{account}:{episode}:{started|stopped|released|cleared}`; the payload says what
/// happens next and when.
fn notice(
    st: &ArrearsState,
    policy: &ArrearsPolicy,
    observed: &Observed,
    step: Step,
    at: i64,
    decision: Option<DecisionKind>,
    was: Option<Phase>,
) -> Notice {
    let (kind, word) = match step {
        Step::Start => (NoticeKind::ArrearsStarted, "started"),
        Step::Stop => (NoticeKind::ArrearsStopped, "stopped"),
        Step::Release => (NoticeKind::ArrearsReleased, "released"),
        Step::Clear => (NoticeKind::ArrearsCleared, "cleared"),
    };
    let next = next_due(st, policy)
        .map(|(t, s)| serde_json::json!({ "step": s.as_str(), "at": format_secs(t) }));
    let mut payload = serde_json::json!({
        "account": st.account,
        "episode": st.episode,
        "phase": st.phase.as_str(),
        "balance": money_text(observed.balance),
        "overdue": observed.overdue,
        "next": next,
    });
    if let Some(map) = payload.as_object_mut() {
        if let Some(d) = decision {
            map.insert("decision".into(), d.as_str().into());
        }
        if let Some(was) = was {
            map.insert("was".into(), was.as_str().into());
        }
    }
    Notice {
        kind,
        account: st.account.clone(),
        key: format!("arrears:{}:{}:{word}", st.account, st.episode),
        at,
        decision: decision.map(|kind| DecisionDue {
            quota: "arrears".into(),
            kind,
        }),
        payload,
        seq: None,
    }
}

#[cfg(test)]
mod tests;
