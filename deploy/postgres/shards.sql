-- docker-compose.yml's shards profile (issue 29): the shard directory and shard 0's database
-- on the main PostgreSQL server, made once, when its data directory is first initialized.
create database directory;
create database shard0;
