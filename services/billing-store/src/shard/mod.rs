//! Shards of whole organization trees (issue 29, `docs/scaling.md`, "Shards").
//!
//! A shard is a database with its own engines. Every shard's engines consume the usage topic
//! (each shard its own consumer group) and fold only the records of the trees it holds; the
//! others are left to their shards, counted, never dead-lettered. A tree is held by exactly
//! one shard: its **root** (the farthest ancestor in the latest price book's organization,
//! or the account itself) hashes to the shard's index. Whole trees, not payers: a budget of an
//! organization node reads its whole subtree, and a tree's payers rate their members there.
//!
//! What every shard folds alike: platform events (spot prices, node faults), which name no
//! account. What shard 0 alone folds: records that cannot be decoded, so that each reaches the
//! dead-letter topic once.

pub mod directory;
pub mod key;
pub(crate) mod moved;
pub(crate) mod moves;
mod on_store;
pub(crate) mod placements;
pub(crate) mod replayed;
pub(crate) mod tables;

pub use key::{MAX_SHARDS, Shard, ShardParseError, root_of, shard_of_root};
pub use moved::join_moved_in;
pub use moves::{MoveReport, abandon_move, move_tree};
