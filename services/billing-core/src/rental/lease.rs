//! Lease states: billing-semantics.md section 8 (停机保号).
//!
//! A lease's timeline is the *set* of its (at, state) points; its state at second `s` is that
//! of the latest point with `at <= s`, several at one second resolving to the one latest in
//! the list of states ([`LeaseState`] is declared in that order), and `running` before its
//! first point. Kept as a sorted set, so the timeline is a function of the set of events.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// A lease's state. Declared in the order of the spec's list: at one second, the later one in
/// this order wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseState {
    Provisioning,
    Running,
    Stopped,
    HostDown,
    Preempted,
    Terminated,
}

impl LeaseState {
    pub const ALL: [LeaseState; 6] = [
        LeaseState::Provisioning,
        LeaseState::Running,
        LeaseState::Stopped,
        LeaseState::HostDown,
        LeaseState::Preempted,
        LeaseState::Terminated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::Provisioning => "provisioning",
            LeaseState::Running => "running",
            LeaseState::Stopped => "stopped",
            LeaseState::HostDown => "host_down",
            LeaseState::Preempted => "preempted",
            LeaseState::Terminated => "terminated",
        }
    }

    /// Strict: an unknown name is `None`, never a default.
    pub fn parse(s: &str) -> Option<LeaseState> {
        LeaseState::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for LeaseState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The (at, state) points of one lease, `at` in whole seconds (floored).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline(BTreeSet<(i64, LeaseState)>);

impl Timeline {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, at: i64, state: LeaseState) {
        self.0.insert((at, state));
    }

    pub fn points(&self) -> impl Iterator<Item = (i64, LeaseState)> + '_ {
        self.0.iter().copied()
    }

    /// The state at second `s`.
    pub fn state_at(&self, s: i64) -> LeaseState {
        self.0
            .range(..=(s, LeaseState::Terminated))
            .next_back()
            .map_or(LeaseState::Running, |p| p.1)
    }

    /// Whether the lease has a `preempted` point anywhere (section 9).
    pub fn was_preempted(&self) -> bool {
        self.0.iter().any(|p| p.1 == LeaseState::Preempted)
    }

    /// Constant pieces `[from, to)` of the state over `[from, to)`, in time order.
    pub fn pieces(&self, from: i64, to: i64) -> Vec<(i64, i64, LeaseState)> {
        let mut out = Vec::new();
        let mut t = from;
        let mut state = self.state_at(from);
        for &(at, _) in self.0.range((from + 1, LeaseState::Provisioning)..) {
            if at >= to {
                break;
            }
            if at == t {
                continue;
            }
            let next = self.state_at(at);
            if next != state {
                out.push((t, at, state));
                t = at;
                state = next;
            }
        }
        if t < to {
            out.push((t, to, state));
        }
        out
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LeaseState::*;

    #[test]
    fn running_before_the_first_point_and_latest_in_the_list_at_one_second() {
        let mut t = Timeline::new();
        t.insert(100, Stopped);
        t.insert(100, Provisioning);
        t.insert(200, Running);
        assert_eq!(t.state_at(99), Running);
        assert_eq!(t.state_at(100), Stopped); // stopped comes after provisioning in the list
        assert_eq!(t.state_at(199), Stopped);
        assert_eq!(t.state_at(200), Running);
    }

    #[test]
    fn pieces_merge_points_that_do_not_change_the_state() {
        let mut t = Timeline::new();
        t.insert(10, Running);
        t.insert(20, Stopped);
        t.insert(25, Stopped);
        t.insert(30, Running);
        assert_eq!(
            t.pieces(0, 40),
            vec![(0, 20, Running), (20, 30, Stopped), (30, 40, Running)]
        );
        assert_eq!(t.pieces(22, 28), vec![(22, 28, Stopped)]);
    }

    #[test]
    fn states_parse_strictly() {
        assert_eq!(LeaseState::parse("host_down"), Some(HostDown));
        assert_eq!(LeaseState::parse("Stopped"), None);
        assert_eq!(LeaseState::parse("paused"), None);
    }
}
