-- The next offset of every consumer partition but the embedded consumer $1's, by consumer
-- and partition.
select consumer, partition, next_offset from consumer_offsets where consumer <> $1
order by consumer, partition
