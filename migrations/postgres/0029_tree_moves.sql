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

-- The numbered documents (invoices, credit notes) moves carried, as this shard saw them go
-- or come: `here` 0 once moved out, 1 once moved in. A shard numbers each tree in the tree's
-- own series, which moves with it; documents of a store-wide series (issued before the store
-- became a shard) do not take their series along, so `gpubill verify` finds a moved-out
-- number missing from its series and a moved-in one from a series it does not issue: both
-- are accounted for here.
create table moved_documents (
    number text primary key,
    root text not null,
    here bigint not null check (here in (0, 1)),
    moved_at_ms bigint not null
);
