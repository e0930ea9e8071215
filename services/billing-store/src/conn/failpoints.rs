//! Fail points (issue 14): named places inside the store's transactions where a test makes
//! the engine "die" at that instant: the call fails there with [`StoreError::FailPoint`], the
//! transaction is dropped (rolled back) and nothing after it runs, as when the process is
//! killed mid-transaction. Per store (tests run side by side in one process), one point armed
//! at a time, firing once on its `skip + 1`-th hit; unarmed, a point costs one relaxed atomic
//! load. The points, in the order a batch or a close meets them:
//!
//! - `fold.after_ledger`, `fold.after_side_tables`, `fold.after_effects`, `fold.before_offsets`:
//!   a batch's fold, after the identities and ledger runs, the side tables (egress, rental
//!   facts, usage facts, dead letters), the provisional costs and decisions, and just before
//!   the offsets move (the last write before the commit);
//! - `close.after_issue`, `close.before_commit`: a close, after its invoices, credit notes,
//!   adjustments, settlements and outbox rows, and after the period row and the command;
//! - `wallet.after_movement`: a top-up or refund, after the movement, before its command.

use crate::conn::error::{Result, StoreError};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every fail point's name (a test may check it armed a real one).
pub const POINTS: [&str; 7] = [
    "fold.after_ledger",
    "fold.after_side_tables",
    "fold.after_effects",
    "fold.before_offsets",
    "close.after_issue",
    "close.before_commit",
    "wallet.after_movement",
];

/// The fail points of a move of a tree between shards (issue 29), hit on the source store:
/// after the target committed the rows, before the source lets go; and after the source let
/// go, before the target takes the tree's records. Apart from [`POINTS`], which the tests
/// that fold and close arm one by one.
pub const MOVE_POINTS: [&str; 2] = ["move.before_source_commit", "move.before_activate"];

#[derive(Debug, Default)]
pub(crate) struct FailPoints {
    armed: AtomicBool,
    /// The armed point and how many hits it lets pass first.
    point: Mutex<Option<(&'static str, u64)>>,
}

impl FailPoints {
    pub(crate) fn arm(&self, name: &str, skip: u64) -> std::result::Result<(), String> {
        let Some(point) = POINTS.iter().chain(&MOVE_POINTS).find(|p| **p == name) else {
            return Err(format!(
                "no fail point {name:?}; the points: {POINTS:?}, {MOVE_POINTS:?}"
            ));
        };
        *self.point.lock().unwrap_or_else(|e| e.into_inner()) = Some((point, skip));
        self.armed.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Fails here when `name` is armed and its hits to let pass are used up (then disarms).
    pub(crate) fn hit(&self, name: &'static str) -> Result<()> {
        if !self.armed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut point = self.point.lock().unwrap_or_else(|e| e.into_inner());
        match point.as_mut() {
            Some((p, skip)) if *p == name => {
                if *skip > 0 {
                    *skip -= 1;
                    return Ok(());
                }
                *point = None;
                self.armed.store(false, Ordering::SeqCst);
                Err(StoreError::FailPoint(name))
            }
            _ => Ok(()),
        }
    }
}
