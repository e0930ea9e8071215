//! A move as its commands carry it (issue 29): what the source records when it lets a tree
//! go, and what the target records of the rows it took in (`replayed.rs` applies both).

use super::placements::Placement;
use crate::conn::error::{Result, StoreError};
use crate::events::commands::Command;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A move as the source records it (and a replay of the source applies it again).
pub(crate) struct MovedOut<'a> {
    pub(crate) root: &'a str,
    pub(crate) seq: i64,
    pub(crate) to: u32,
    pub(crate) cutover: &'a BTreeMap<i64, i64>,
    pub(crate) at_ms: i64,
}

impl MovedOut<'_> {
    pub(crate) fn command(&self) -> Command {
        Command::TreeMovedOut {
            root: self.root.to_string(),
            seq: self.seq,
            shard: self.to,
            cutover: self.cutover.iter().map(|(p, o)| (*p, *o)).collect(),
            at_ms: self.at_ms,
        }
    }
}

/// Longest `data` of one `tree.moved_in` part, in hex characters (512 KiB: half a megabyte
/// of rows per record, under the 1 MB a Kafka broker takes by default).
pub(crate) const PART_HEX: usize = 512 * 1024;

/// The rows of a tree moved in, and what the target recorded of the move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MovedIn {
    pub(crate) root: String,
    pub(crate) seq: i64,
    /// Drawn by the move: tells its commands from an abandoned attempt's.
    pub(crate) nonce: i64,
    /// The target's index.
    pub(crate) shard: u32,
    /// The tree's earlier moves, as the source knew them.
    pub(crate) history: Vec<Placement>,
    pub(crate) cutover: BTreeMap<i64, i64>,
    /// The numbers of the tree's issued documents.
    pub(crate) numbers: Vec<String>,
    /// Per table (in `TABLES` order): its rows as binary `COPY` data, in hex.
    pub(crate) tables: Vec<(String, String)>,
    pub(crate) at_ms: i64,
}

impl MovedIn {
    /// The `tree.moved_in` parts of this move.
    pub(crate) fn commands(&self) -> Result<Vec<Command>> {
        let json = serde_json::to_vec(self).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let data = hex::encode(json);
        let parts: Vec<&str> = split_parts(&data, PART_HEX);
        let count = parts.len() as u32;
        Ok(parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| Command::TreeMovedIn {
                root: self.root.clone(),
                seq: self.seq,
                nonce: self.nonce,
                part: i as u32,
                parts: count,
                data: part.to_string(),
                at_ms: self.at_ms,
            })
            .collect())
    }

    /// The move of the joined parts' `data`.
    pub(crate) fn parse(root: &str, data: &str) -> Result<MovedIn> {
        let corrupt = |e: String| StoreError::Corrupt(format!("tree.moved_in of {root:?}: {e}"));
        let json = hex::decode(data).map_err(|e| corrupt(e.to_string()))?;
        serde_json::from_slice(&json).map_err(|e| corrupt(e.to_string()))
    }
}

/// `data` in parts of at most `size` characters (one part when it is empty). `data` is hex:
/// every character is one byte.
fn split_parts(data: &str, size: usize) -> Vec<&str> {
    if data.is_empty() {
        return vec![data];
    }
    data.as_bytes()
        .chunks(size.max(1))
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect()
}

/// Joins the parts of one `tree.moved_in` (the commands topic's order) into one command of
/// one part, which [`apply`] takes; None while parts are missing. Parts of another move, or
/// out of order, are refused.
pub fn join_moved_in(parts: &[Command]) -> std::result::Result<Option<Command>, String> {
    let mut data = String::new();
    let mut head: Option<(&String, i64, i64, u32, i64)> = None;
    for (i, c) in parts.iter().enumerate() {
        let Command::TreeMovedIn {
            root,
            seq,
            nonce,
            part,
            parts: count,
            data: d,
            at_ms,
        } = c
        else {
            return Err(format!("{} is not a part of a tree.moved_in", c.id()));
        };
        let this = (root, *seq, *nonce, *count);
        if head.is_some_and(|h| (h.0, h.1, h.2, h.3) != this) {
            return Err(format!(
                "tree.moved_in of {root:?} (move {seq}, nonce {nonce:016x}): part {part} came among the parts of another move"
            ));
        }
        if *part as usize != i {
            return Err(format!(
                "tree.moved_in of {root:?} (move {seq}): part {part} of {count} came where part {i} was due"
            ));
        }
        head = Some((root, *seq, *nonce, *count, *at_ms));
        data.push_str(d);
    }
    let Some((root, seq, nonce, count, at_ms)) = head else {
        return Ok(None);
    };
    if parts.len() < count as usize {
        return Ok(None);
    }
    Ok(Some(Command::TreeMovedIn {
        root: root.clone(),
        seq,
        nonce,
        part: 0,
        parts: 1,
        data,
        at_ms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(rows: usize) -> MovedIn {
        MovedIn {
            root: "corp".into(),
            seq: 2,
            nonce: 0x1234,
            shard: 1,
            history: vec![Placement {
                seq: 1,
                shard: 0,
                cutover: Some(BTreeMap::from([(0, 7), (3, 11)])),
                active: true,
                moved_at_ms: 5,
            }],
            cutover: BTreeMap::from([(0, 40), (1, 2), (3, 90)]),
            numbers: vec!["INV-corp-2026-000001".into()],
            tables: vec![("usage_facts".into(), "ab".repeat(rows))],
            at_ms: 1_796_083_200_000,
        }
    }

    #[test]
    fn a_move_in_parts_joins_back_into_the_same_move() {
        let m = moved(700_000);
        let parts = m.commands().unwrap();
        // 1.4M hex characters of rows, twice in hex again: 6 parts of at most 512 KiB.
        assert_eq!(parts.len(), 6);
        for p in &parts {
            let Command::TreeMovedIn { data, .. } = p else {
                panic!("{p:?}")
            };
            assert!(data.len() <= PART_HEX);
        }
        assert_eq!(join_moved_in(&parts[..5]), Ok(None));
        let Some(Command::TreeMovedIn {
            root,
            seq,
            part: 0,
            nonce: 0x1234,
            parts: 1,
            data,
            at_ms,
        }) = join_moved_in(&parts).unwrap()
        else {
            panic!("not joined")
        };
        assert_eq!((root.as_str(), seq, at_ms), ("corp", 2, m.at_ms));
        assert_eq!(MovedIn::parse("corp", &data).unwrap(), m);
        // A small move is one part, and its ids tell the parts apart.
        let one = moved(10).commands().unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].id(), "tree.moved_in:corp:2:0000000000001234:0");
        assert_eq!(parts[5].id(), "tree.moved_in:corp:2:0000000000001234:5");
    }

    #[test]
    fn the_moves_commands_come_back_from_their_json() {
        let out = Command::TreeMovedOut {
            root: "corp".into(),
            seq: 1,
            shard: 1,
            cutover: vec![(0, 40), (3, 90)],
            at_ms: 5,
        };
        let mut all = moved(3).commands().unwrap();
        all.push(out);
        for c in all {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), c, "{json}");
        }
    }

    #[test]
    fn parts_out_of_order_or_of_two_moves_are_refused() {
        let parts = moved(700_000).commands().unwrap();
        let err = join_moved_in(&[parts[1].clone()]).unwrap_err();
        assert!(
            err.contains("part 1 of 6 came where part 0 was due"),
            "{err}"
        );
        let mut other = moved(700_000);
        other.nonce = 7;
        let theirs = other.commands().unwrap();
        let err = join_moved_in(&[parts[0].clone(), theirs[1].clone()]).unwrap_err();
        assert!(err.contains("among the parts of another move"), "{err}");
    }
}
