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

/// The partitions of PostgreSQL's `events` (migration 0011), by name.
async fn event_partitions(url: &str) -> Vec<String> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let rows: Vec<(String,)> = sqlx::query_as(
        "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid \
         where i.inhparent = 'events'::regclass order by 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| r.0).collect()
}

/// Rows of one partition of `events`.
async fn rows_in(url: &str, partition: &str) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query_scalar(&format!("select count(*) from {partition}"))
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

/// Identities live in monthly partitions of the event's end: a month is made ahead of the
/// clock (taking over what the default partition held of it), a conflict is found across
/// partitions, and compaction drops a closed month whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identities_are_partitioned_by_month_and_compaction_drops_whole_months() {
    let url = fresh_db(Db::Postgres).await;
    let store = Store::open(&url)
        .await
        .unwrap()
        .with_dedupe_horizon(400 * 86_400);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    // Before any month exists everything lands in the default partition.
    assert_eq!(event_partitions(&url).await, ["events_default"]);
    let may = usage("m1", "2026-05-10T00:00:00Z", "2026-05-10T01:00:00Z");
    let out = store
        .log()
        .ingest(vec![may.clone()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["accepted"]);
    assert_eq!(rows_in(&url, "events_default").await, 1);

    // Months from three before the clock's to two after it; May is not among them yet.
    assert_eq!(
        store
            .log()
            .maintain_partitions(DEC_2_2026_MS)
            .await
            .unwrap(),
        6
    );
    assert_eq!(
        store
            .log()
            .maintain_partitions(DEC_2_2026_MS)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        event_partitions(&url).await,
        [
            "events_202609",
            "events_202610",
            "events_202611",
            "events_202612",
            "events_202701",
            "events_202702",
            "events_default"
        ]
    );
    // A clock in June 2026 makes May, which takes over the default partition's May row.
    store
        .log()
        .maintain_partitions(DEC_2_2026_MS - 170 * DAY_MS)
        .await
        .unwrap();
    assert_eq!(rows_in(&url, "events_202605").await, 1);
    assert_eq!(rows_in(&url, "events_default").await, 0);
    let out = store.log().ingest(vec![may], DEC_2_2026_MS).await.unwrap();
    assert_eq!(statuses(&out), ["duplicate"], "found in its new partition");

    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    let out = store
        .log()
        .ingest(vec![nov.clone(), dec], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["accepted", "accepted"]);
    assert_eq!(rows_in(&url, "events_202611").await, 1);
    assert_eq!(rows_in(&url, "events_202612").await, 1);
    // The same identity with other content ending in another month is a conflict, found
    // across partitions, and nothing of it is stored.
    let moved = usage("n1", "2026-12-01T02:00:00Z", "2026-12-01T03:00:00Z");
    let out = store
        .log()
        .ingest(vec![moved], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["conflict"]);
    assert_eq!(rows_in(&url, "events_202612").await, 1);

    // May and November closed; 400 days after November the whole month's partitions go.
    store
        .finance()
        .close_period("2026-05", DEC_2_2026_MS)
        .await
        .unwrap();
    store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let later = DEC_2_2026_MS + 430 * DAY_MS;
    assert_eq!(store.log().compact(later).await.unwrap(), 2);
    let left = event_partitions(&url).await;
    assert!(!left.contains(&"events_202605".to_string()), "{left:?}");
    assert!(!left.contains(&"events_202611".to_string()), "{left:?}");
    // December is open: its month stays.
    assert!(left.contains(&"events_202612".to_string()), "{left:?}");
    assert_eq!(store.log().event_count().await.unwrap(), 1);
    let out = store.log().ingest(vec![nov], later).await.unwrap();
    assert_eq!(statuses(&out), ["too_late"]);
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
