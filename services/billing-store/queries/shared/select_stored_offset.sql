-- The stored next offset of consumer $1's partition $2.
select next_offset from consumer_offsets where consumer = $1 and partition = $2
