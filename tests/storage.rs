//! Issue 11, bounded storage: the dedupe horizon (`too_late`) and compaction of identities.

use billing_store::{Outcome, Store};
use gpubill_tests::*;
use serde_json::json;

const BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"
"#;

const DAY_MS: i64 = 86_400_000;

fn usage(id: &str, start: &str, end: &str) -> Vec<u8> {
    usage_of("acme", id, start, end)
}

fn usage_of(account: &str, id: &str, start: &str, end: &str) -> Vec<u8> {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
        "data":{"lease":"L1","resource":"g0","sku":"gpu.h100","start":start,"end":end}})
    .to_string()
    .into_bytes()
}

fn statuses(out: &[Outcome]) -> Vec<String> {
    out.iter()
        .map(|o| match o {
            Outcome::Accepted => "accepted".to_string(),
            Outcome::Duplicate => "duplicate".to_string(),
            Outcome::Rejected { reason, .. } => reason.to_string(),
        })
        .collect()
}

async fn compaction_never_changes_an_invoice_nor_lets_an_event_count_twice(db: Db) {
    let store = Store::open(&fresh_db(db).await)
        .await
        .unwrap()
        .with_dedupe_horizon(90 * 86_400);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    let old = usage_of(
        "oldco",
        "o1",
        "2026-11-04T00:00:00Z",
        "2026-11-04T01:00:00Z",
    );
    let out = store
        .log()
        .ingest(vec![nov.clone(), dec.clone(), old], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["accepted", "accepted", "accepted"]);
    let issued = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let before: Vec<String> = issued
        .iter()
        .map(|i| serde_json::to_string(&i.invoice).unwrap())
        .collect();
    // Inside the horizon nothing is dropped and a redelivery is a duplicate.
    assert_eq!(store.log().compact(DEC_2_2026_MS).await.unwrap(), 0);
    let out = store
        .log()
        .ingest(vec![nov.clone()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["duplicate"]);
    // 100 days on: November's identity goes (its period is closed and past the horizon),
    // December's stays (December is open).
    let later = DEC_2_2026_MS + 100 * DAY_MS;
    assert_eq!(store.log().compact(later).await.unwrap(), 2);
    assert_eq!(store.log().event_count().await.unwrap(), 1);
    // An account whose every identity is gone is still known (later periods invoice it).
    assert!(
        store
            .admin()
            .known_accounts()
            .await
            .unwrap()
            .contains("oldco")
    );
    // A redelivery of the compacted event is refused, never counted again.
    let out = store.log().ingest(vec![nov], later).await.unwrap();
    assert_eq!(statuses(&out), ["too_late"]);
    let after: Vec<String> = store
        .finance()
        .invoices(None, Some("2026-11"))
        .await
        .unwrap()
        .iter()
        .map(|i| serde_json::to_string(&i.invoice).unwrap())
        .collect();
    assert_eq!(before, after);
    let ledger = store.log().account_ledger("acme").await.unwrap();
    let seconds: i64 = ledger.usage().map(|(_, r)| r.covered_seconds()).sum();
    assert_eq!(seconds, 7200, "the ledger keeps both hours");
}
on_both!(compaction_never_changes_an_invoice_nor_lets_an_event_count_twice);

/// A store on `url` keeping identities 400 days, with the book.
async fn store_with_book(url: &str) -> Store {
    let store = Store::open(url)
        .await
        .unwrap()
        .with_dedupe_horizon(400 * 86_400);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    store
}

/// One statement's rows against the test's PostgreSQL database, as text.
async fn texts(url: &str, sql: &str) -> Vec<String> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&mut conn).await.unwrap();
    rows.into_iter().map(|r| r.0).collect()
}

/// Issue 29, one index probe per event: identities are one table keyed by the identity alone
/// (migration 0028), so a batch of new identities goes in by one `COPY`; a batch that meets
/// a held one (a redelivery or a conflict, even one ending in another month) falls back to
/// the look-up, keeps nothing of its `COPY`, and answers exactly what the `COPY` would not;
/// the next batches take the slow way straight away, then the `COPY` again. Compaction
/// drops identities by the index on their end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identities_go_in_by_copy_and_a_held_one_falls_back_without_losing_a_row() {
    use billing_store::{IdentityPaths, SLOW_AFTER_FALLBACK};
    let url = fresh_db(Db::Postgres).await;
    let store = store_with_book(&url).await;
    // The migrated table: one key, on the identity; an index on the end; no partitions.
    assert_eq!(
        texts(
            &url,
            "select indexdef from pg_indexes where tablename = 'events' order by indexname"
        )
        .await,
        [
            "CREATE INDEX events_by_end ON public.events USING btree (end_s)",
            "CREATE UNIQUE INDEX events_pkey ON public.events USING btree (ident)"
        ]
    );
    assert_eq!(
        texts(
            &url,
            "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid"
        )
        .await,
        Vec::<String>::new()
    );
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    let may = usage("m1", "2026-05-10T00:00:00Z", "2026-05-10T01:00:00Z");
    assert_eq!(
        ingest_at(&store, vec![nov.clone(), may], DEC_2_2026_MS).await,
        ["accepted", "accepted"]
    );
    let paths = |copied, fell_back, slow, looked_up| IdentityPaths {
        copied,
        fell_back,
        slow,
        looked_up,
    };
    assert_eq!(store.identity_paths(), paths(1, 0, 0, 0));
    // A redelivery this store sent itself: looked up before the COPY, which takes the rest.
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    let dec2 = usage("d2", "2026-12-01T01:00:00Z", "2026-12-01T02:00:00Z");
    assert_eq!(
        ingest_at(&store, vec![dec, nov.clone(), dec2], DEC_2_2026_MS).await,
        ["accepted", "duplicate", "accepted"]
    );
    assert_eq!(store.identity_paths(), paths(2, 0, 0, 1));
    // Another engine (a store of its own) has not seen it: its COPY meets the held identity,
    // nothing of the COPY stays, and the look-up statement accepts the new one and finds
    // the conflict (same identity, other content, ending in another month).
    let other = Store::open(&url)
        .await
        .unwrap()
        .with_dedupe_horizon(400 * 86_400);
    let moved = usage("n1", "2026-12-01T02:00:00Z", "2026-12-01T03:00:00Z");
    let dec3 = usage("d3", "2026-12-01T03:00:00Z", "2026-12-01T04:00:00Z");
    assert_eq!(
        ingest_at(&other, vec![dec3, moved], DEC_2_2026_MS).await,
        ["accepted", "conflict"]
    );
    assert_eq!(other.identity_paths(), paths(0, 1, 0, 0));
    assert_eq!(
        texts(
            &url,
            "select end_s::text from events where account = 'acme' order by end_s"
        )
        .await,
        [
            "1778374800",
            "1793667600",
            "1796086800",
            "1796090400",
            "1796097600"
        ]
    );
    // Its next batches look every identity up before the COPY, then trust the COPY again.
    for n in 1..=SLOW_AFTER_FALLBACK {
        let fresh = usage(
            &format!("s{n}"),
            "2026-12-01T05:00:00Z",
            "2026-12-01T05:00:01Z",
        );
        assert_eq!(
            ingest_at(&other, vec![fresh], DEC_2_2026_MS).await,
            ["accepted"]
        );
    }
    let fresh = usage("again", "2026-12-01T06:00:00Z", "2026-12-01T06:00:01Z");
    assert_eq!(
        ingest_at(&other, vec![fresh], DEC_2_2026_MS).await,
        ["accepted"]
    );
    let n = u64::from(SLOW_AFTER_FALLBACK);
    assert_eq!(other.identity_paths(), paths(n + 1, 1, n, n));
    other.close().await;

    // Compaction goes by the index on the end: May and November closed, 400 days after
    // November both identities go, December's stay.
    for period in ["2026-05", "2026-11"] {
        store
            .finance()
            .close_period(period, DEC_2_2026_MS)
            .await
            .unwrap();
    }
    // The delete can read its rows from the index (with sequential scans priced out, a plan
    // without the index would still scan the table).
    let plan = {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query("set enable_seqscan = off")
            .execute(&mut conn)
            .await
            .unwrap();
        let rows: Vec<(String,)> = sqlx::query_as(
            "explain (costs off) delete from events where end_s < 1800000000 and exists \
             (select 1 from periods p where events.end_s > p.start_s and events.end_s <= p.end_s)",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        rows.into_iter().map(|r| r.0).collect::<Vec<_>>().join("\n")
    };
    assert!(plan.contains("events_by_end"), "{plan}");
    let later = DEC_2_2026_MS + 430 * DAY_MS;
    assert_eq!(store.log().compact(later).await.unwrap(), 2);
    assert_eq!(
        store.log().event_count().await.unwrap(),
        4 + i64::from(SLOW_AFTER_FALLBACK)
    );
    assert_eq!(ingest_at(&store, vec![nov], later).await, ["too_late"]);
}

async fn ingest_at(store: &Store, records: Vec<Vec<u8>>, now_ms: i64) -> Vec<String> {
    statuses(&store.log().ingest(records, now_ms).await.unwrap())
}

/// Runs one statement against the test's PostgreSQL database (to corrupt a stored value).
async fn exec(url: &str, sql: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query(sql).execute(&mut conn).await.unwrap();
}

/// Issue 25, a typed store boundary: a stored class, level or amount the code does not know
/// is an error naming the table, the column and the value. Before, a class other than `spot`
/// read as on-demand and a credit that did not parse read as zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_stored_class_or_credit_is_an_error_not_a_default() {
    let url = fresh_db(Db::Postgres).await;
    let store = Store::open(&url).await.unwrap();
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    store.log().ingest(vec![nov], DEC_2_2026_MS).await.unwrap();
    store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    exec(&url, "update ledger_keys set class = 'gpu'").await;
    let err = store
        .log()
        .account_ledger("acme")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(r#"ledger_keys.class holds "gpu""#), "{err}");
    exec(&url, "update ledger_keys set class = 'on_demand'").await;
    exec(&url, "update invoices set credit = 'lots'").await;
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    let err = store
        .log()
        .ingest(vec![dec], DEC_2_2026_MS)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(r#"invoices/adjustments.credit holds "lots""#),
        "{err}"
    );
}

/// Issue 25, a typed store boundary: every stored status, kind, method and reason is one the
/// code knows. A word it does not know, or money that does not parse, is an error naming the
/// table, the column and the value, whichever public read meets it (before, these were read
/// as strings and passed on as they were).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_stored_word_is_an_error_naming_table_column_and_value() {
    use billing_store::{AdminMovement, HoldRequest, Quotas};
    let url = fresh_db(Db::Postgres).await;
    let store = Store::open(&url).await.unwrap();
    let now = DEC_2_2026_MS;
    store.admin().put_pricebook(BOOK, now).await.unwrap();
    store
        .admin()
        .create_account("acme", "hash", now)
        .await
        .unwrap();
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    // A dead letter, and an invoice of 36.00 that a top-up of 5.00 pays from the wallet.
    store
        .log()
        .ingest(vec![nov, b"not json".to_vec()], now)
        .await
        .unwrap();
    store.finance().close_period("2026-11", now).await.unwrap();
    let topup = "5".parse().unwrap();
    store
        .finance()
        .wallet_movement("acme", AdminMovement::Topup, topup, "t1", now)
        .await
        .unwrap();
    // A quota decision: December's usage is over the spend limit.
    let quotas: Quotas = serde_json::from_str(r#"{"spend_limit":"1.00"}"#).unwrap();
    store
        .quota()
        .set_quotas("acme", None, &quotas, now)
        .await
        .unwrap();
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    store.log().ingest(vec![dec], now).await.unwrap();
    assert!(
        !store
            .quota()
            .quota_decisions(None, None, None, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let quotas: Quotas = serde_json::from_str("{}").unwrap();
    store
        .quota()
        .set_quotas("acme", None, &quotas, now)
        .await
        .unwrap();
    let request = HoldRequest {
        account: "acme".into(),
        region: None,
        sku: "gpu.h100".into(),
        quantity: "1".parse().unwrap(),
        seconds: 60,
        lease: None,
    };
    let hold = match store
        .quota()
        .authorize(&request, 300_000, now)
        .await
        .unwrap()
    {
        billing_store::Authorization::Allowed(h) => h.id,
        denied => panic!("{denied:?}"),
    };
    // (table, column, what it holds, an unknown value, the read that meets it)
    let cases = [
        ("holds", "status", "live", "frozen", "release"),
        ("wallet_movements", "kind", "topup", "gift", "wallet"),
        ("wallet_movements", "amount", "5.00", "lots", "wallet"),
        ("invoice_payments", "method", "wallet", "cash", "verify"),
        ("invoices", "status", "issued", "void", "invoices"),
        (
            "dead_letters",
            "reason",
            "malformed_json",
            "bad_luck",
            "dead_letters",
        ),
        ("quota_decisions", "kind", "warn", "panic", "decisions"),
    ];
    for (table, column, good, bad, read) in cases {
        exec(
            &url,
            &format!("update {table} set {column} = '{bad}' where {column} = '{good}'"),
        )
        .await;
        let err = match read {
            "release" => store
                .quota()
                .release_hold(&hold, None, now)
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            "wallet" => store
                .finance()
                .wallet("acme")
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            "verify" => store
                .finance()
                .verify(None)
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            "invoices" => store
                .finance()
                .invoices(Some("acme"), None)
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            "dead_letters" => store
                .log()
                .dead_letters(0, 10)
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            "decisions" => store
                .quota()
                .quota_decisions(Some("acme"), None, None, 0, 10)
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            other => unreachable!("{other}"),
        };
        let named = format!("{table}.{column} holds \"{bad}\"");
        assert!(err.contains(&named), "{named}: {err}");
        exec(
            &url,
            &format!("update {table} set {column} = '{good}' where {column} = '{bad}'"),
        )
        .await;
    }
    // Rows of a kind the code does not know, put in beside the real ones.
    let rows = [
        (
            "insert into account_terms values ('acme', 'gifts', 'g1', '{}', 999, 0)",
            "delete from account_terms where kind = 'gifts'",
            r#"account_terms.kind holds "gifts""#,
        ),
        (
            "insert into rental_events values ('moon.phase', '', 'x', 0, 1, '')",
            "delete from rental_events where kind = 'moon.phase'",
            r#"rental_events.kind holds "moon.phase""#,
        ),
    ];
    for (insert, delete, named) in rows {
        exec(&url, insert).await;
        let err = if named.starts_with("account_terms") {
            store
                .admin()
                .account_terms("acme")
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string()
        } else {
            store
                .log()
                .platform()
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert!(err.contains(named), "{named}: {err}");
        exec(&url, delete).await;
    }
    // Restored, every read answers again.
    store.admin().account_terms("acme").await.unwrap();
    store.log().platform().await.unwrap();
    store.quota().release_hold(&hold, None, now).await.unwrap();
    store.finance().verify(None).await.unwrap();
    store.log().dead_letters(0, 10).await.unwrap();
}

/// Migration 0028 carries every identity of the monthly partitions (a month's and the
/// default one) into the one table: after it, a redelivery of each is still a duplicate and
/// the same identity with other content still a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migration_0028_carries_the_monthly_identities_over() {
    let url = fresh_db(Db::Postgres).await;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/postgres");
    let mut before = sqlx::migrate::Migrator::new(dir).await.unwrap();
    before.migrations = std::borrow::Cow::Owned(
        before
            .migrations
            .iter()
            .filter(|m| m.version < 28)
            .cloned()
            .collect(),
    );
    before.run(&pool).await.unwrap();
    // A November partition, as `maintain_partitions` made them; May goes to the default one.
    sqlx::query(
        "create table events_202611 partition of events \
         for values from (1793491200) to (1796083200)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    let may = usage("m1", "2026-05-10T00:00:00Z", "2026-05-10T01:00:00Z");
    // The identity rows the engine stored for them under 0011.
    for (n, record) in [&nov, &may].into_iter().enumerate() {
        let e = billing_core::event::decode(record).unwrap();
        sqlx::query(
            "insert into events (ident, fingerprint, account, log_seq, end_s) \
             values ($1, $2, $3, $4, $5)",
        )
        .bind(&billing_store::identity(&e.source, &e.id)[..])
        .bind(&e.fingerprint().to_le_bytes()[..])
        .bind(e.subject.to_string())
        .bind(n as i64)
        .bind(e.end_secs())
        .execute(&pool)
        .await
        .unwrap();
    }
    let held: Vec<(i64,)> = sqlx::query_as(
        "select count(*) from events_202611 union all select count(*) from events_default",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(held, [(1,), (1,)]);
    pool.close().await;

    let store = store_with_book(&url).await;
    assert_eq!(store.log().event_count().await.unwrap(), 2);
    let moved = usage("n1", "2026-12-01T02:00:00Z", "2026-12-01T03:00:00Z");
    let out = store
        .log()
        .ingest(vec![nov, may, moved], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["duplicate", "duplicate", "conflict"]);
    assert_eq!(store.log().event_count().await.unwrap(), 2);
}
