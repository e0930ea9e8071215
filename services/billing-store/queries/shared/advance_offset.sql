-- Moves consumer $2's partition $3 to next offset $1 only if it stands at $4 (compare-and-set:
-- one row affected, or none when another writer moved it).
update consumer_offsets set next_offset = $1 where consumer = $2 and partition = $3 and next_offset = $4
