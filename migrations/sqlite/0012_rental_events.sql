-- Issue 10, billing-semantics part 2. What the rental events say, as sets (each rule is a
-- function of the set of events, so a row is stored once however often it arrives):
--   kind         account       key                          a                b        value
--   lease.state  the account   lease                        at (floored)     0        state
--   net.counter  the account   JSON [lease, interface, dest] at (floored)    0        bytes_total
--   spot.price   ''            sku                          from (floored)   0        price (normalized)
--   node.fault   ''            node                         start (floored)  end (ceiled) ''
-- Platform events (spot.price, node.fault) name no account: every account's rating reads them.
create table rental_events (
    kind text not null,
    account text not null,
    key text not null,
    a bigint not null,
    b bigint not null,
    value text not null,
    primary key (kind, account, key, a, b, value)
);
create index rental_events_by_account on rental_events (account);

-- Section 10: each usage key's coverage by source (the node that reported it), as runs like
-- the ledger's: a JSON object source -> runs. Keys folded before this migration have none
-- (their coverage is unknown: no SLA compensation is computed from it).
alter table ledger_keys add column sources text;

-- A platform event that arrives for a closed period may change every invoice of it: it is
-- noted as late once per account invoiced there, so the late notes are keyed by account too.
create table late_usage_by_account (
    source text not null,
    id text not null,
    account text not null,
    period text not null,
    log_seq bigint not null,
    primary key (source, id, period, account)
);
insert into late_usage_by_account (source, id, account, period, log_seq)
select source, id, account, period, log_seq from late_usage;
drop table late_usage;
alter table late_usage_by_account rename to late_usage;
