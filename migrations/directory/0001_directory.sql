-- Issue 29: the directory of a sharded deployment, a small PostgreSQL database of its own.
-- `shards`: each shard's database and API (the API forwards a request for a tree it does not
-- hold to the holder's `api_url`). `tree_placements`: where a moved tree is now (a tree not
-- listed is on the shard its root hashes to: billing_store::shard::shard_of_root), written by
-- `gpubill shards move` once a move is done.
create table shards (
    shard bigint primary key,
    shard_count bigint not null check (shard_count > 0 and shard >= 0 and shard < shard_count),
    database_url text not null,
    api_url text not null
);

create table tree_placements (
    root text primary key,
    shard bigint not null,
    moves bigint not null,
    moved_at_ms bigint not null
);
