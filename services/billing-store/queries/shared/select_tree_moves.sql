-- The moves of organization trees this shard took part in (issue 29), per root in move order.
-- No parameters.
select root, seq, shard, cutover, state, moved_at_ms from tree_moves order by root, seq
