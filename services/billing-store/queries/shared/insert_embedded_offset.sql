-- Makes the embedded consumer's position (partition 0, next offset 1) unless it exists.
-- $1: the embedded consumer's name.
insert into consumer_offsets (consumer, partition, next_offset) values ($1, 0, 1)
on conflict (consumer, partition) do nothing
