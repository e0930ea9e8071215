-- Issue 11: identities stored compactly. An event's identity (source, id) is kept as the
-- first 16 bytes of SHA-256("{octet_length(source)}:{source}|{id}") instead of two text
-- columns, with its 16-byte content fingerprint: one fixed-width primary key, a smaller index
-- and a binary insert. The dead letters keep the readable source and id of what they reject.
create table events_compact (
    ident bytea primary key,
    fingerprint bytea not null,
    account text not null,
    log_seq bigint not null,
    end_s bigint
);
insert into events_compact (ident, fingerprint, account, log_seq, end_s)
select substring(sha256(convert_to(octet_length(source)::text || ':' || source || '|' || id, 'UTF8')) from 1 for 16),
       fingerprint, account, log_seq, end_s
from events;
drop table events;
alter table events_compact rename to events;
