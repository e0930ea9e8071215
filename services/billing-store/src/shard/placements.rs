//! Where a tree is after moves (`tree_moves`, migration 0029): who folds a record of a tree
//! at a partition and offset, and whether this shard holds a tree now.
//!
//! A tree's history is its hash home, then each move in order: (holder, cutover). The holder
//! of a record at (partition p, offset o) is that of the last move whose cutover of p is at
//! or below o (a partition missing from a cutover counts as 0), else the hash home. Cutovers
//! only grow from move to move: each is the source's stored positions, which only grow.

use super::key::{Shard, root_of, shard_of_root};
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use billing_core::event::{AnyEvent, Rejection};
use billing_core::pricebook::PriceBook;
use std::collections::{BTreeMap, HashMap};

/// One move of a tree, as this shard knows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Placement {
    pub(crate) seq: i64,
    pub(crate) shard: u32,
    /// Partition → first offset the new holder folds (None until the target knows it).
    pub(crate) cutover: Option<BTreeMap<i64, i64>>,
    pub(crate) active: bool,
    pub(crate) moved_at_ms: i64,
}

/// Who folds a record of a tree, as seen from one shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    Here,
    Elsewhere,
    /// The tree is moving in: its records wait until the move is done.
    Wait,
}

/// The moves this shard took part in, per root.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placements {
    pub(crate) moves: HashMap<String, Vec<Placement>>,
}

impl Placements {
    pub(crate) async fn load(conn: &mut dyn Conn) -> Result<Placements> {
        let rows =
            crate::conn::db::query(include_str!("../../queries/shared/select_tree_moves.sql"))
                .fetch_all(&mut *conn)
                .await?;
        let mut moves: HashMap<String, Vec<Placement>> = HashMap::new();
        for r in rows {
            let cutover: Option<String> = r.get("cutover");
            let cutover = match cutover {
                Some(text) => Some(parse_cutover(&text)?),
                None => None,
            };
            let state: String = r.get("state");
            moves.entry(r.get("root")).or_default().push(Placement {
                seq: r.get("seq"),
                shard: u32::try_from(r.get::<i64, _>("shard"))
                    .map_err(|_| StoreError::Corrupt("tree_moves.shard below 0".into()))?,
                cutover,
                active: state == "active",
                moved_at_ms: r.get("moved_at_ms"),
            });
        }
        Ok(Placements { moves })
    }

    /// Who folds a record of the tree `root` at `partition`, `offset`, seen from `shard`.
    pub(crate) fn holder(&self, shard: Shard, root: &str, partition: i64, offset: i64) -> Holder {
        let Some(history) = self.moves.get(root) else {
            return home(shard, root);
        };
        if history
            .last()
            .is_some_and(|m| m.shard == shard.index && !m.active)
        {
            return Holder::Wait;
        }
        let mut holder = shard_of_root(root, shard.count);
        for m in history.iter().filter(|m| m.active) {
            let from = m
                .cutover
                .as_ref()
                .and_then(|c| c.get(&partition).copied())
                .unwrap_or(0);
            if from <= offset {
                holder = m.shard;
            }
        }
        if holder == shard.index {
            Holder::Here
        } else {
            Holder::Elsewhere
        }
    }

    /// Whether `shard` holds the tree `root` now (its last active move's target, or its hash
    /// home without one): what it invoices and answers for.
    pub(crate) fn holds_now(&self, shard: Shard, root: &str) -> bool {
        match self
            .moves
            .get(root)
            .and_then(|h| h.iter().rev().find(|m| m.active))
        {
            Some(m) => m.shard == shard.index,
            None => home(shard, root) == Holder::Here,
        }
    }
}

/// Who folds a decoded record at `partition`, `offset` (see the module header and
/// [`placements`]).
pub(crate) fn folds(
    shard: Shard,
    book: Option<&PriceBook>,
    placements: &Placements,
    decoded: &std::result::Result<AnyEvent<'_>, Rejection>,
    (partition, offset): (i64, i64),
) -> Holder {
    use Holder;
    match decoded {
        Err(_) if shard.index == 0 => Holder::Here,
        Err(_) => Holder::Elsewhere,
        Ok(e) if e.is_platform() => Holder::Here,
        Ok(e) => placements.holder(shard, root_of(book, &e.subject), partition, offset),
    }
}

fn home(shard: Shard, root: &str) -> Holder {
    if shard_of_root(root, shard.count) == shard.index {
        Holder::Here
    } else {
        Holder::Elsewhere
    }
}

/// `{"0": 12, "3": 40}` → partition → offset.
pub(crate) fn parse_cutover(text: &str) -> Result<BTreeMap<i64, i64>> {
    let raw: BTreeMap<String, i64> = serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("tree_moves.cutover {text:?}: {e}")))?;
    raw.into_iter()
        .map(|(p, o)| {
            p.parse::<i64>()
                .map(|p| (p, o))
                .map_err(|_| StoreError::Corrupt(format!("tree_moves.cutover partition {p:?}")))
        })
        .collect()
}

pub(crate) fn cutover_text(cutover: &BTreeMap<i64, i64>) -> String {
    let raw: BTreeMap<String, i64> = cutover.iter().map(|(p, o)| (p.to_string(), *o)).collect();
    serde_json::to_string(&raw).unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(seq: i64, shard: u32, cutover: &[(i64, i64)], active: bool) -> Placement {
        Placement {
            seq,
            shard,
            cutover: Some(cutover.iter().copied().collect()),
            active,
            moved_at_ms: 0,
        }
    }

    #[test]
    fn records_before_a_cutover_are_the_old_holders_and_from_it_the_new_ones() {
        // "corp" hashes to shard 1 of 2 (see the module above). Moved to 0 at partition 0
        // offset 10 and partition 1 offset 4 (partition 2 never folded: all of it is 0's);
        // then back to 1 at partition 0 offset 20.
        let s0 = Shard { index: 0, count: 2 };
        let s1 = Shard { index: 1, count: 2 };
        let mut p = Placements::default();
        p.moves.insert(
            "corp".into(),
            vec![
                moved(1, 0, &[(0, 10), (1, 4)], true),
                moved(2, 1, &[(0, 20), (1, 4), (2, 0)], true),
            ],
        );
        let at = |s, part, off| p.holder(s, "corp", part, off);
        assert_eq!(at(s1, 0, 9), Holder::Here);
        assert_eq!(at(s0, 0, 9), Holder::Elsewhere);
        assert_eq!(at(s0, 0, 10), Holder::Here);
        assert_eq!(at(s0, 0, 19), Holder::Here);
        assert_eq!(at(s1, 0, 20), Holder::Here);
        assert_eq!(at(s0, 0, 20), Holder::Elsewhere);
        // Partition 1: the second move's cutover equals the first's, so from 4 on it is 1's.
        assert_eq!(at(s1, 1, 3), Holder::Here);
        assert_eq!(at(s1, 1, 4), Holder::Here);
        assert!(p.holds_now(s1, "corp") && !p.holds_now(s0, "corp"));
        // A tree without moves is its hash home's.
        assert_eq!(p.holder(s1, "other", 0, 0), home(s1, "other"));
    }

    #[test]
    fn a_tree_moving_in_waits_and_is_not_held_yet() {
        let s0 = Shard { index: 0, count: 2 };
        let mut p = Placements::default();
        let mut copying = moved(1, 0, &[], false);
        copying.cutover = None;
        p.moves.insert("corp".into(), vec![copying]);
        assert_eq!(p.holder(s0, "corp", 0, 0), Holder::Wait);
        assert!(!p.holds_now(s0, "corp"));
    }

    #[test]
    fn a_cutover_is_json_by_partition() {
        let c: BTreeMap<i64, i64> = [(0, 12), (3, 40)].into_iter().collect();
        let text = cutover_text(&c);
        assert_eq!(text, r#"{"0":12,"3":40}"#);
        assert_eq!(parse_cutover(&text).unwrap(), c);
        assert!(parse_cutover("{\"x\":1}").is_err());
    }
}
