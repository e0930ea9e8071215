-- gpubill store, SQLite (embedded default). Same tables and meaning as ../postgres.
-- Times are Unix seconds (_s) or milliseconds (_ms); money and quantities are decimal text.

-- The embedded event log: raw records by sequence number (Kafka is the log in cluster mode).
create table log (
    seq integer primary key,
    payload blob not null,
    received_at_ms integer not null
);

-- Dedupe identity with the content fingerprint (XXH3-128 of the event's meaning).
create table events (
    source text not null,
    id text not null,
    fingerprint blob not null,
    account text not null,
    log_seq integer not null,
    primary key (source, id)
);
create index events_by_id on events (id);

-- The per-second ledger: one row per usage key holding its disjoint runs as JSON
-- [[from_s, to_s, "quantity"], ...], sorted and merged.
create table ledger_keys (
    key_id text primary key,
    account text not null,
    lease text not null,
    resource text not null,
    sku text not null,
    class text not null,
    runs text not null,
    first_s integer not null,
    end_s integer not null
);
create index ledger_keys_by_account on ledger_keys (account);

create table egress (
    source text not null,
    id text not null,
    account text not null,
    dest text not null,
    time_s integer not null,
    time_ns integer not null,
    bytes integer not null,
    primary key (source, id)
);
create index egress_by_account on egress (account, time_s);

create table dead_letters (
    seq integer primary key autoincrement,
    log_seq integer,
    reason text not null,
    detail text not null,
    source text,
    event_id text,
    payload blob not null,
    created_at_ms integer not null
);

create table pricebooks (
    version integer primary key,
    effective_from_s integer,
    toml text not null,
    uploaded_at_ms integer not null
);

create table accounts (
    id text primary key,
    created_at_ms integer not null
);

-- API keys are stored as SHA-256 hex of the key; the key itself is shown once.
create table api_keys (
    key_hash text primary key,
    account text not null references accounts (id),
    created_at_ms integer not null
);

create table periods (
    period text primary key,
    start_s integer not null,
    end_s integer not null,
    pricebook_version integer not null,
    closed_at_ms integer not null
);

-- Issued invoices never change: body is the invoice JSON of billing-semantics.md section 6.
create table invoices (
    id text primary key,
    account text not null,
    period text not null,
    number text not null unique,
    status text not null,
    issued_at_ms integer not null,
    pricebook_version integer not null,
    credit text not null,
    total text not null,
    body text not null,
    unique (account, period)
);

-- Usage that arrived for a closed period: kept in the ledger, listed as a pending adjustment.
create table late_usage (
    source text not null,
    id text not null,
    account text not null,
    period text not null,
    log_seq integer not null,
    primary key (source, id, period)
);

create table consumer_offsets (
    consumer text not null,
    partition integer not null,
    next_offset integer not null,
    primary key (consumer, partition)
);

create table outbox (
    seq integer primary key autoincrement,
    topic text not null,
    key text not null,
    payload text not null,
    created_at_ms integer not null,
    published_at_ms integer
);

create table settings (
    name text primary key,
    value text not null
);
