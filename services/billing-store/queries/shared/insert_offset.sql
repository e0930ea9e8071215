-- Makes consumer $1's partition $2 start at offset $3 unless it has a position.
insert into consumer_offsets (consumer, partition, next_offset) values ($1, $2, $3)
on conflict (consumer, partition) do nothing
