-- The next log sequence the embedded consumer $1 folds (partition 0).
select next_offset from consumer_offsets where consumer = $1 and partition = 0
