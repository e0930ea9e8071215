//! Issue 11: PostgreSQL keeps identities its own way (16-byte digests bound as native arrays
//! through sqlx's PostgreSQL driver; every batch of rows one `unnest` of arrays) and SQLite
//! its own ((source, id) text, JSON; rows of `?` placeholders); the fold is shared. On the same random input
//! (overlapping heartbeats, redeliveries, conflicts, hostile records, egress, random batch
//! sizes) both give the same outcomes, ledgers, dead letters, invoices and provisional costs.

use billing_store::{Outcome, Store};
use gpubill_tests::*;
use serde_json::json;

const BOOK: &str = r#"
currency = "USD"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "36.00"
spot_rate_per_hour = "12.00"
minimum_seconds = 60
tiers = [ { up_to_hours = 2, rate_per_hour = "36.00" }, { rate_per_hour = "30.00" } ]

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
tiers = [ { up_to_gb = 1, rate_per_gb = "0" }, { rate_per_gb = "0.10" } ]

[tax]
rate = "0.06"
"#;

/// A random batch of records: usage (November and December 2026, Shanghai), egress,
/// redeliveries, conflicting redeliveries and hostile records.
fn records(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let base = 1_793_462_400; // 2026-11-01T00:00:00+08:00
    let mut out: Vec<String> = Vec::new();
    for n in 0..160 {
        let account = ["acme", "beta", "gamma"][rng.below(3) as usize];
        let start = base + rng.below(40 * 86_400) as i64;
        let len = 1 + rng.below(7200) as i64;
        let quantity = ["1", "0.25", "0.5", "2"][rng.below(4) as usize];
        let class = if rng.below(5) == 0 {
            "spot"
        } else {
            "on_demand"
        };
        let bytes = rng.below(3_000_000_000);
        let source = format!("node/{}", rng.below(4));
        let lease = format!("L{}", rng.below(3));
        let resource = format!("g{}", rng.below(4));
        let e = if rng.below(10) == 0 {
            json!({"specversion":"1.0","id":format!("x{n}"),"source":"gw/1","type":"net.egress","subject":account,
                "time":rfc(start),"data":{"dest":"internet","bytes":bytes}})
        } else {
            json!({"specversion":"1.0","id":format!("u{n}"),"source":source,"type":"gpu.usage","subject":account,
                "data":{"lease":lease,"resource":resource,"sku":"gpu.h100",
                    "class":class,
                    "start":rfc(start),"end":rfc(start + len),"quantity":quantity}})
        };
        out.push(e.to_string());
    }
    for _ in 0..30 {
        let r = out[rng.below(out.len() as u64) as usize].clone();
        out.push(r);
    }
    for _ in 0..10 {
        let r = out[rng.below(out.len() as u64) as usize]
            .replace("\"quantity\":\"1\"", "\"quantity\":\"3\"");
        out.push(r);
    }
    out.extend([
        "{not json".to_string(),
        json!({"specversion":"1.0","id":"h1","source":"n","type":"gpu.usage","subject":"' OR 1=1","data":{}}).to_string(),
        json!({"specversion":"1.0","id":"h2","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"l","resource":"r","sku":"gpu.h100","start":"1969-01-01T00:00:00Z","end":"1969-01-01T00:01:00Z"}}).to_string(),
    ]);
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i as u64 + 1) as usize);
    }
    out.into_iter().map(String::into_bytes).collect()
}

async fn ingest(store: &Store, records: &[Vec<u8>], seed: u64) -> Vec<String> {
    let mut rng = Rng(seed ^ 0xB47C4);
    let mut outcomes = Vec::new();
    let mut rest = records;
    while !rest.is_empty() {
        let n = (1 + rng.below(60) as usize).min(rest.len());
        let (batch, tail) = rest.split_at(n);
        for o in store
            .log()
            .ingest(batch.to_vec(), DEC_2_2026_MS)
            .await
            .unwrap()
        {
            outcomes.push(match o {
                Outcome::Accepted => "accepted".to_string(),
                Outcome::Duplicate => "duplicate".to_string(),
                Outcome::Rejected { reason, detail } => format!("{reason}: {detail}"),
            });
        }
        rest = tail;
    }
    outcomes
}

/// What both backends must agree on, as text.
async fn state(store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    for q in [
        "select account || '|' || lease || '|' || resource || '|' || sku || '|' || class || '|' || runs from ledger_keys order by key_id",
        "select source || '|' || id || '|' || account || '|' || dest || '|' || time_s || '|' || bytes from egress order by source, id",
        "select reason || '|' || detail from dead_letters order by log_seq",
        "select account || '|' || period || '|' || total || '|' || body from provisional_costs order by account, period",
        "select account || '|' || period || '|' || source || '|' || id from late_usage order by source, id",
    ] {
        for r in billing_store::db::query(q)
            .fetch_all(store.pool())
            .await
            .unwrap()
        {
            out.push(r.get::<String, _>(0));
        }
    }
    out.push(store.log().event_count().await.unwrap().to_string());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_and_sqlite_fold_random_input_identically() {
    for seed in 1..=6u64 {
        let input = records(seed);
        let mut seen = Vec::new();
        for db in BOTH {
            let store = Store::open(&fresh_db(db).await).await.unwrap();
            store
                .admin()
                .put_pricebook(BOOK, DEC_2_2026_MS)
                .await
                .unwrap();
            let outcomes = ingest(&store, &input, seed).await;
            let invoices: Vec<String> = store
                .finance()
                .close_period("2026-11", DEC_2_2026_MS)
                .await
                .unwrap()
                .iter()
                .map(|i| serde_json::to_string(&i.invoice).unwrap())
                .collect();
            // Late usage after the close, then everything again (all duplicates now).
            let late = ingest(&store, &input, seed + 1).await;
            assert!(outcomes.iter().any(|o| o == "accepted"));
            assert!(
                outcomes.iter().any(|o| o.starts_with("conflict")),
                "seed {seed}"
            );
            seen.push((outcomes, invoices, late, state(&store).await));
            store.close().await;
        }
        let (sqlite, postgres) = (&seen[0], &seen[1]);
        assert_eq!(sqlite.0, postgres.0, "outcomes differ (seed {seed})");
        assert_eq!(sqlite.1, postgres.1, "invoices differ (seed {seed})");
        assert_eq!(
            sqlite.2, postgres.2,
            "redelivery outcomes differ (seed {seed})"
        );
        assert_eq!(sqlite.3, postgres.3, "stored state differs (seed {seed})");
    }
}

/// (table, column, declared type, nullable).
type ColumnRow = (String, String, String, bool);
/// (table, `primary key` or `unique`, its columns in order).
type KeyRow = (String, String, String);

/// A migrated database's schema, as sorted lines: `table.column type null|not null` per
/// column (types normalised by [`column_type`]), `table primary key (a, b)` and
/// `table unique (a, b)` per key. sqlx's `_sqlx_migrations` is left out, and so are
/// partitions of tables, if any: storage of one table, not tables of the schema.
async fn schema_of(db: Db, url: &str) -> Vec<String> {
    use sqlx::{Connection, Row};
    let (columns, keys): (Vec<ColumnRow>, Vec<KeyRow>) = match db {
        Db::Postgres => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            let columns = sqlx::query(
                "select c.table_name::text, c.column_name::text, c.udt_name::text, \
                            c.is_nullable = 'YES' \
                     from information_schema.columns c \
                     join pg_class k on k.relname = c.table_name and not k.relispartition \
                     join pg_namespace n on n.oid = k.relnamespace and n.nspname = c.table_schema \
                     where c.table_schema = 'public' and c.table_name <> '_sqlx_migrations'",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
            // Every primary key and unique index of a table that is no partition, its
            // columns in index order (partial indexes are not keys).
            let keys = sqlx::query(
                "select t.relname::text, \
                            case when i.indisprimary then 'primary key' else 'unique' end, \
                            string_agg(a.attname::text, ', ' order by k.n) \
                     from pg_index i \
                     join pg_class t on t.oid = i.indrelid and not t.relispartition \
                     join pg_namespace s on s.oid = t.relnamespace and s.nspname = 'public' \
                     cross join lateral unnest(i.indkey) with ordinality as k(attnum, n) \
                     join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum \
                     where i.indisunique and i.indpred is null \
                       and t.relname <> '_sqlx_migrations' \
                     group by t.relname, i.indexrelid, i.indisprimary",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
            (columns, keys)
        }
        Db::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
            let tables = "select name from sqlite_master where type = 'table' \
                              and name not like 'sqlite\\_%' escape '\\' \
                              and name <> '_sqlx_migrations'";
            let columns = sqlx::query(&format!(
                "select m.name, p.name, lower(p.type), p.\"notnull\" = 0 and p.pk = 0 \
                     from ({tables}) m join pragma_table_info(m.name) p"
            ))
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
            // `origin`: `pk` for the primary key's index, `u` for a `unique` constraint,
            // `c` for `create unique index`. A rowid primary key (`integer primary key`)
            // has no index: it comes from `pragma_table_info`'s `pk`.
            let mut keys: Vec<KeyRow> = sqlx::query(&format!(
                "select m.name, case when l.origin = 'pk' then 'primary key' else 'unique' end, \
                            group_concat(i.name, ', ' order by i.seqno) \
                     from ({tables}) m join pragma_index_list(m.name) l \
                     join pragma_index_info(l.name) i \
                     where l.\"unique\" and not l.partial \
                     group by m.name, l.name \
                     order by m.name, l.name"
            ))
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
            let rowid_keys: Vec<KeyRow> = sqlx::query(&format!(
                "select m.name, 'primary key', p.name \
                     from ({tables}) m join pragma_table_info(m.name) p \
                     where p.pk = 1 and lower(p.type) = 'integer' \
                       and (select count(*) from pragma_table_info(m.name) q where q.pk > 0) = 1 \
                       and not exists (select 1 from pragma_index_list(m.name) l \
                                       where l.origin = 'pk')"
            ))
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
            keys.extend(rowid_keys);
            (columns, keys)
        }
    };
    let mut out: Vec<String> = columns
        .into_iter()
        .map(|(t, c, ty, nullable)| {
            let null = if nullable { "null" } else { "not null" };
            format!("{t}.{c} {} {null}", column_type(&ty))
        })
        .chain(
            keys.into_iter()
                .map(|(t, kind, cols)| format!("{t} {kind} ({cols})")),
        )
        .collect();
    out.sort();
    out
}

/// A column's declared type, normalised to what the store means by it on both databases:
/// every integer width is `integer` (SQLite stores 64 bits whatever the declaration; the
/// store reads PostgreSQL's `integer` columns as `i64` too), `text`/`varchar` is `text`
/// (money is decimal text on both), `bytea`/`blob` is `blob`, `bool`/`boolean` is
/// `boolean`, floats are `real`. Anything else is kept as declared, so a new type shows up.
fn column_type(declared: &str) -> String {
    let t = declared.trim().to_ascii_lowercase();
    let base = t.split('(').next().unwrap_or("").trim();
    match base {
        "int" | "int2" | "int4" | "int8" | "integer" | "bigint" | "smallint" => "integer",
        "text" | "varchar" | "character varying" | "char" | "bpchar" => "text",
        "bytea" | "blob" => "blob",
        "bool" | "boolean" => "boolean",
        "real" | "float4" | "float8" | "double precision" | "double" => "real",
        "numeric" | "decimal" => "numeric",
        _ => return t,
    }
    .to_string()
}

/// Drops a test's database: PostgreSQL's (`drop database`), SQLite's file.
async fn drop_db(db: Db, url: &str) {
    match db {
        Db::Postgres => {
            use sqlx::Connection;
            let name = url.rsplit('/').next().unwrap();
            let mut conn = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_base()))
                .await
                .unwrap();
            sqlx::query(&format!("drop database if exists {name} with (force)"))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        Db::Sqlite => {
            let path = url.trim_start_matches("sqlite://");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
    }
}

/// Issue 25: after every migration both backends have the same tables, the same columns with
/// the same normalised types and nullability, the same primary keys and the same unique
/// keys, except the differences listed here with their reason. PostgreSQL must be running:
/// without it the test fails (it never skips).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_and_sqlite_schemas_agree_after_migrations() {
    let mut schemas = Vec::new();
    for db in BOTH {
        let url = fresh_db(db).await;
        Store::open(&url).await.unwrap().close().await;
        schemas.push(schema_of(db, &url).await);
        drop_db(db, &url).await;
    }
    let (sqlite, postgres) = (&schemas[0], &schemas[1]);
    // The reads see keys of every kind on both (a rowid key, a text key, a composite key, a
    // `unique` constraint), or the comparison below would prove nothing.
    for schema in [sqlite, postgres] {
        for line in [
            "log primary key (seq)",
            "accounts primary key (id)",
            "consumer_offsets primary key (consumer, partition)",
            "invoices unique (account, period)",
            "invoices unique (number)",
            "events.end_s integer not null",
        ] {
            assert!(
                schema.iter().any(|l| l == line),
                "{line} missing from {schema:#?}"
            );
        }
    }
    // The differences on purpose, each with its reason.
    let known_sqlite = [
        // Identities (issue 11, migrations/README.md): SQLite keys `events` by the (source,
        // id) text, PostgreSQL by a 16-byte digest of it (one global unique index, migration
        // 0028).
        "events primary key (source, id)",
        "events.id text not null",
        "events.source text not null",
        // Fold stamps (migration 0020): a one-row counter table on SQLite, a sequence on
        // PostgreSQL (`create sequence fold_stamps`), which is not a table.
        "fold_stamps.last integer not null",
    ];
    let known_postgres = [
        // Identities, as above: the digest.
        "events primary key (ident)",
        "events.ident blob not null",
    ];
    let only_sqlite: Vec<&String> = sqlite
        .iter()
        .filter(|c| !postgres.contains(c) && !known_sqlite.contains(&c.as_str()))
        .collect();
    let only_postgres: Vec<&String> = postgres
        .iter()
        .filter(|c| !sqlite.contains(c) && !known_postgres.contains(&c.as_str()))
        .collect();
    for known in known_sqlite {
        assert!(
            sqlite.iter().any(|c| c == known),
            "{known} is no longer in SQLite: drop it from the list"
        );
    }
    for known in known_postgres {
        assert!(
            postgres.iter().any(|c| c == known),
            "{known} is no longer in PostgreSQL: drop it from the list"
        );
    }
    assert!(
        only_sqlite.is_empty() && only_postgres.is_empty(),
        "schemas differ:\n only in SQLite: {only_sqlite:#?}\n only in PostgreSQL: {only_postgres:#?}"
    );
}

#[test]
fn declared_types_normalise_to_the_stores_meaning() {
    for (declared, meant) in [
        ("bigint", "integer"),
        ("INTEGER", "integer"),
        ("int4", "integer"),
        ("int8", "integer"),
        ("text", "text"),
        ("varchar(32)", "text"),
        ("bytea", "blob"),
        ("BLOB", "blob"),
        ("bool", "boolean"),
        ("float8", "real"),
        ("numeric(20, 6)", "numeric"),
        ("jsonb", "jsonb"),
    ] {
        assert_eq!(column_type(declared), meant, "{declared}");
    }
}

/// Issue 29, shards of whole payers: the PostgreSQL schema's distance from Citus, kept exact.
/// On Citus a table is either *distributed* by the shard key (the payer: every table keyed by
/// an account) or a *reference* table copied to every node (the platform's own: price books,
/// periods, settings). A distributed table's primary and unique keys must each hold the
/// shard key, and no foreign key may cross payers. This test lists every key of the migrated
/// schema that breaks the rule, with its reason: a migration that adds one fails here until
/// it is listed (or fixed), and one that fixes one fails here until it is struck off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keys_that_do_not_yet_hold_the_shard_key_are_known() {
    use sqlx::{Connection, Row};
    let url = fresh_db(Db::Postgres).await;
    Store::open(&url).await.unwrap().close().await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    // (table, kind, definition) of every primary key, unique key and foreign key.
    let keys: Vec<(String, String)> = sqlx::query(
        "select c.conrelid::regclass::text as tbl, pg_get_constraintdef(c.oid) as def \
         from pg_constraint c join pg_class r on r.oid = c.conrelid \
         join pg_namespace n on n.oid = r.relnamespace \
         where n.nspname = 'public' and c.contype in ('p', 'u', 'f') \
         and r.relname <> '_sqlx_migrations' and not r.relispartition order by 1, 2",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| (r.get("tbl"), r.get("def")))
    .collect();
    // The platform's own tables: reference tables on Citus, the same on every shard.
    let reference = [
        "pricebooks",
        "periods",
        "settings",
        "number_series",
        "consumer_offsets",
    ];
    // Whether a key's own columns (the first parenthesis) hold `account`.
    let holds_account = |def: &str| {
        def.split_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .is_some_and(|(cols, _)| cols.split(", ").any(|c| c == "account"))
    };
    let gaps: Vec<String> = keys
        .iter()
        .filter(|(t, _)| !reference.contains(&t.as_str()))
        .filter(|(_, def)| def.starts_with("FOREIGN KEY") || !holds_account(def))
        .map(|(t, def)| format!("{t}: {def}"))
        .collect();
    let known = [
        // Already keyed by the account under another name.
        "accounts: PRIMARY KEY (id)",
        // Sequences of the whole database: on shards, each shard's own (numbers per payer
        // are drawn from `number_series`, whose rows the move command must carry).
        "account_term_revisions: PRIMARY KEY (rev)",
        "dead_letters: PRIMARY KEY (seq)",
        "invoice_payments: PRIMARY KEY (seq)",
        "log: PRIMARY KEY (seq)",
        "outbox: PRIMARY KEY (seq)",
        "quota_decisions: PRIMARY KEY (seq)",
        "wallet_movements: PRIMARY KEY (seq)",
        // Ids drawn by the store (text that embeds the account, or a digest): unique per
        // shard, to be keyed (account, id) before Citus.
        "credit_notes: PRIMARY KEY (id)",
        "holds: PRIMARY KEY (id)",
        "invoices: PRIMARY KEY (id)",
        "notifications: PRIMARY KEY (id)",
        "quota_decisions: UNIQUE (id)",
        "webhook_endpoints: PRIMARY KEY (id)",
        "deliveries: PRIMARY KEY (endpoint, notification)",
        "delivery_attempts: PRIMARY KEY (endpoint, notification, attempt)",
        "ledger_keys: PRIMARY KEY (key_id)",
        "invoice_payments: UNIQUE (invoice_id, reference)",
        // Gapless numbers per series: unique per series, and a series belongs to one shard
        // only if numbering is per payer or per region (section 19's prefixes).
        "credit_notes: UNIQUE (number)",
        "invoices: UNIQUE (number)",
        // Identities are (source, id) of the node that sent the event, not of the account:
        // sharded, each shard dedupes the payers it holds (the usage topic is keyed by payer).
        "events: PRIMARY KEY (ident)",
        "egress: PRIMARY KEY (source, id)",
        // Keys and idempotency are the API's: the directory routes them.
        "api_keys: PRIMARY KEY (key_hash)",
        "api_keys: FOREIGN KEY (account) REFERENCES accounts(id)",
        "idempotency_keys: PRIMARY KEY (scope, key)",
        // Issue 29's moves of trees between shards: keyed by the tree's root account (the
        // shard key of separate-database shards), not by an account of the tree.
        "tree_moves: PRIMARY KEY (root, seq)",
        // The documents moves carried, by number: numbers are unique in the deployment (each
        // shard its own series).
        "moved_documents: PRIMARY KEY (number)",
    ];
    let unexplained: Vec<&String> = gaps
        .iter()
        .filter(|g| !known.contains(&g.as_str()))
        .collect();
    assert!(
        unexplained.is_empty(),
        "keys without the shard key: {unexplained:#?}"
    );
    for k in known {
        assert!(
            gaps.iter().any(|g| g == k),
            "{k} now holds the shard key (or is gone): strike it off"
        );
    }
}
