-- Issue 29, shards of whole organization trees: the moves of trees between shards that this
-- shard took part in (as source or target), in move order per root. A tree with no row here
-- is held by the shard its root hashes to (billing_store::shard::shard_of_root).
--
-- `cutover`: JSON {"partition": offset, ...}, per partition of the usage topic the first
-- offset `shard` folds; earlier records of the tree belong to the previous holder. It is the
-- source's stored positions when the move took the source's writer lock (a partition the
-- source had never folded is absent: the whole partition is the new holder's).
-- `state`: `copying` on the target until the source has let go of the tree (its records wait
-- meanwhile, nothing folds them), then `active`.
create table tree_moves (
    root text not null,
    seq bigint not null,
    shard bigint not null,
    cutover text,
    state text not null check (state in ('copying', 'active')),
    moved_at_ms bigint not null,
    primary key (root, seq)
);
