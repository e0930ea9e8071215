-- The table names of the partitions of events. No parameters.
select c.relname::text as partition from pg_inherits i join pg_class c on c.oid = i.inhrelid
where i.inhparent = 'events'::regclass
