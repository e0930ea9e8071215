//! A shard's part of a batch (issue 29): the records of the trees it holds, before anything
//! of the batch is written (see `crate::shard`).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::store::Store;
use crate::events::records::{Part, Records};
use billing_core::event::{AnyEvent, Rejection};

/// A shard's records of the batch (issue 29, `crate::shard`): the others are its other
/// shards', counted and left out before identities, so that nothing of them is written here.
/// Their offsets still advance with the batch: each shard reads every partition. A record of
/// a tree moving in fails the batch, to be folded again once the move is done.
pub(crate) async fn keep_own_trees<'a>(
    conn: &mut dyn Conn,
    store: &Store,
    parts: &[Part<'_>],
    batch: Records<'a>,
    decoded: Vec<Result<AnyEvent<'a>, Rejection>>,
) -> Result<(Records<'a>, Vec<Result<AnyEvent<'a>, Rejection>>)> {
    use crate::shard::placements::{Holder, Placements};
    let Some(shard) = store.shard else {
        return Ok((batch, decoded));
    };
    let books = store.books(conn).await?;
    let book = books.1.latest();
    let placements = Placements::load(conn).await?;
    let mut kept = (
        Vec::with_capacity(batch.len()),
        Vec::with_capacity(batch.len()),
    );
    let mut left = 0u64;
    // The holder of a tree that never moved does not depend on the record's position: found
    // once per root and batch (its digest), not once per record.
    let mut unmoved: std::collections::HashMap<String, Holder> = Default::default();
    for (record, d) in batch.into_iter().zip(decoded) {
        let at = (parts[record.0].0.partition, record.1);
        let root = match &d {
            Ok(e) if !e.is_platform() => Some(crate::shard::key::root_of(book, &e.subject)),
            _ => None,
        };
        let holder = match root.filter(|r| !placements.moves.contains_key(*r)) {
            Some(r) => match unmoved.get(r) {
                Some(h) => *h,
                None => {
                    let h = placements.holder(shard, r, at.0, at.1);
                    unmoved.insert(r.to_string(), h);
                    h
                }
            },
            None => crate::shard::placements::folds(shard, book, &placements, &d, at),
        };
        match holder {
            Holder::Here => {
                kept.0.push(record);
                kept.1.push(d);
            }
            Holder::Elsewhere => left += 1,
            Holder::Wait => {
                let root = d
                    .as_ref()
                    .map(|e| crate::shard::key::root_of(book, &e.subject).to_string())
                    .unwrap_or_default();
                return Err(StoreError::TreeMoving { root });
            }
        }
    }
    if left > 0 {
        store
            .other_shards
            .fetch_add(left, std::sync::atomic::Ordering::Relaxed);
        metrics::counter!("gpubill_records_other_shards_total").increment(left);
    }
    Ok(kept)
}
