-- Issue 27 (billing-semantics section 18): an egress event may name the `lease` it left
-- from; the allocation of egress lines reads that lease's tag at the event's second. Null
-- for egress without a lease (and for every row folded before this migration, which the
-- engine folded when it did not read tags yet).
alter table egress add column lease text;
