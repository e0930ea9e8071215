//! Moves as commands (issue 29): what a move did to each shard, recorded in the transaction
//! that did it, so that `gpubill replay --shard` rebuilds a shard that trees left or joined.
//!
//! - The source records `tree.moved_out` (the tree, its move's number, the target and the
//!   cutover) in the transaction that deleted the tree's rows. Replayed, the same statements
//!   run again: the move recorded `active`, the documents noted as moved out, the rows
//!   deleted. The source's replay then leaves the tree's records from the cutover on to the
//!   target, as the live source did.
//! - The target records `tree.moved_in` in the transaction that wrote the rows: the rows
//!   themselves (each table's binary `COPY` data), the tree's earlier moves, the cutover and the
//!   documents' numbers, as JSON in hex, cut into parts of at most [`PART_HEX`] characters so
//!   that each fits a broker's message. Replayed, the parts are joined and the rows written
//!   by the same function, renumbered in the same order from the same sequences.
//! - `gpubill shards abandon` records `tree.move_abandoned` on the target: replayed, the
//!   copied rows and the move's record go again.
//!
//! A replay applies each in the commands topic's order, among the recorded folds, so the
//! records a shard folded before and after a move are folded again on the same side of it.

use super::moved::{MovedIn, MovedOut};
use super::moves::{activate, delete_rows, leave, remove_copied, start_copying, write_target};
use crate::conn::error::{Result, StoreError};
use crate::conn::store::Store;
use crate::events::commands::Command;
use std::collections::BTreeMap;

impl Store {
    /// Applies a move's command (a replay): see the module's header.
    pub(crate) async fn apply_move(&self, command: &Command) -> Result<()> {
        apply(self, command).await
    }
}

async fn apply(store: &Store, command: &Command) -> Result<()> {
    let pool = match &store.pool {
        crate::conn::db::Pool::Pg(p) => p,
        crate::conn::db::Pool::Lite(_) => {
            return Err(StoreError::Corrupt(format!(
                "{}: shards are PostgreSQL databases",
                command.id()
            )));
        }
    };
    match command {
        Command::TreeMovedOut {
            root,
            seq,
            shard,
            cutover,
            at_ms,
        } => {
            let cutover: BTreeMap<i64, i64> = cutover.iter().copied().collect();
            let out = MovedOut {
                root,
                seq: *seq,
                to: *shard,
                cutover: &cutover,
                at_ms: *at_ms,
            };
            let mut tx = pool.begin().await?;
            leave(store, &mut tx, &out).await?;
            delete_rows(&mut tx).await?;
            store.record_command(&mut *tx, command, *at_ms).await?;
            tx.commit().await?;
        }
        Command::TreeMovedIn {
            root, parts, data, ..
        } => {
            if *parts != 1 {
                return Err(StoreError::Corrupt(format!(
                    "{}: the {parts} parts of a move are applied joined (join_moved_in)",
                    command.id()
                )));
            }
            let moved = MovedIn::parse(root, data)?;
            let to = super::key::Shard {
                index: moved.shard,
                count: store.shard.map_or(0, |s| s.count),
            };
            start_copying(pool, root, &moved.history, (moved.seq, to), moved.at_ms).await?;
            write_target(store, &moved).await?;
            activate(pool, root, moved.seq).await?;
        }
        Command::TreeMoveAbandoned {
            root, seq, at_ms, ..
        } => {
            let mut tx = pool.begin().await?;
            remove_copied(store, &mut tx, root, *seq).await?;
            store.record_command(&mut *tx, command, *at_ms).await?;
            tx.commit().await?;
        }
        other => {
            return Err(StoreError::Corrupt(format!(
                "{} is not a move of a tree",
                other.id()
            )));
        }
    }
    Ok(())
}
