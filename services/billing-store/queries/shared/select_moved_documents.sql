-- The numbered documents moves of trees carried out of or into this shard (issue 29), with
-- whether each is here now (1) or moved out (0). No parameters.
select number, here from moved_documents
