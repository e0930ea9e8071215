//! Issue 11: no global writer lock. Engines sharing one PostgreSQL fold their own partitions
//! concurrently; a writer of the same partition takes turns and is fenced; closes wait for
//! the folds in flight and see what they wrote.

use billing_store::{Outcome, Position, Store};
use gpubill_tests::*;
use serde_json::json;
use std::time::Duration;

const BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"
"#;

fn usage(id: &str, subject: &str, start: &str, end: &str) -> Vec<u8> {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":subject,
        "data":{"lease":"L1","resource":"g0","sku":"gpu.h100","start":start,"end":end}})
    .to_string()
    .into_bytes()
}

fn at(partition: i64, expected_next: i64) -> Position<'static> {
    Position {
        consumer: "gpu.usage.v1",
        partition,
        expected_next,
        dead_letter_topic: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn engines_fold_their_partitions_while_another_holds_its_transaction_open() {
    let url = fresh_db(Db::Postgres).await;
    let a = std::sync::Arc::new(Store::open(&url).await.unwrap());
    let b = std::sync::Arc::new(Store::open(&url).await.unwrap());
    a.admin().put_pricebook(BOOK, DEC_2_2026_MS).await.unwrap();

    // Engine A folds partition 0 (account "alpha") and holds its transaction open.
    let (paused_tx, paused_rx) = tokio::sync::oneshot::channel::<()>();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let held = {
        let a = a.clone();
        tokio::spawn(async move {
            let records = [usage(
                "a1",
                "alpha",
                "2026-11-03T00:00:00Z",
                "2026-11-03T01:00:00Z",
            )];
            let refs: Vec<(i64, &[u8])> = vec![(0, &records[0][..])];
            a.log()
                .fold_partitions_then(&[(at(0, 0), &refs[..])], DEC_2_2026_MS, async {
                    let _ = paused_tx.send(());
                    let _ = release_rx.await;
                })
                .await
        })
    };
    paused_rx.await.unwrap();

    // Engine B keeps folding partition 1 (account "beta"), batch after batch, meanwhile.
    let t0 = std::time::Instant::now();
    for n in 0..5i64 {
        let rec = usage(
            &format!("b{n}"),
            "beta",
            &format!("2026-11-04T0{n}:00:00Z"),
            &format!("2026-11-04T0{n}:30:00Z"),
        );
        let refs: Vec<(i64, &[u8])> = vec![(n, &rec[..])];
        let out = tokio::time::timeout(
            Duration::from_secs(5),
            b.log()
                .fold_partitions(&[(at(1, n), &refs[..])], DEC_2_2026_MS),
        )
        .await
        .expect("B's partition waited on A's open transaction")
        .unwrap();
        assert_eq!(out, vec![vec![Outcome::Accepted]]);
    }
    let waited = t0.elapsed();

    // B writing A's partition waits for A, then is fenced: A moved the offset first.
    let same_partition = {
        let b = b.clone();
        tokio::spawn(async move {
            let rec = usage("x", "alpha", "2026-11-05T00:00:00Z", "2026-11-05T00:01:00Z");
            let refs: Vec<(i64, &[u8])> = vec![(0, &rec[..])];
            b.log()
                .fold_partitions(&[(at(0, 0), &refs[..])], DEC_2_2026_MS)
                .await
        })
    };
    // A close waits for the fold in flight.
    let close = {
        let b = b.clone();
        tokio::spawn(async move { b.finance().close_period("2026-11", DEC_2_2026_MS).await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !same_partition.is_finished(),
        "two writers of one partition at once"
    );
    assert!(
        !close.is_finished(),
        "a close did not wait for the fold in flight"
    );
    release_tx.send(()).unwrap();
    held.await.unwrap().unwrap();
    let fenced = same_partition.await.unwrap();
    assert!(
        matches!(
            fenced,
            Err(billing_store::StoreError::Fenced { expected: 0 })
        ),
        "{fenced:?}"
    );
    let invoices = tokio::time::timeout(Duration::from_secs(20), close)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let totals: Vec<(String, String)> = invoices
        .iter()
        .map(|i| (i.invoice.account.clone(), i.invoice.total.to_string()))
        .collect();
    // alpha: 1 h at 36.00 (A's batch, committed before the close read); beta: 5 x 30 min.
    assert_eq!(
        totals,
        [
            ("alpha".to_string(), "36.00".to_string()),
            ("beta".to_string(), "90.00".to_string())
        ]
    );
    eprintln!("engine B folded 5 batches in {waited:?} while A held its transaction open");
}

/// A heartbeat of `subject`'s GPU `g` for minute `m` of 2026-11-03.
fn minute(subject: &str, g: u32, m: u32) -> Vec<u8> {
    let t = |m: u32| format!("2026-11-03T{:02}:{:02}:00Z", m / 60, m % 60);
    json!({"specversion":"1.0","id":format!("{subject}-{g}-{m}"),"source":"node/1","type":"gpu.usage",
        "subject":subject,"data":{"lease":format!("L{g}"),"resource":format!("g{g}"),"sku":"gpu.h100",
        "start":t(m),"end":t(m + 1)}})
    .to_string()
    .into_bytes()
}

/// Issue 11, HTTP ingest: concurrent `Store::ingest` calls are group-committed. While one
/// large request folds, twenty small ones queue and go in far fewer transactions than
/// requests; each caller still gets exactly its own records' outcomes, duplicates across
/// requests count once, a bad record is dead-lettered in its own request's answer, and the
/// ledger is the one sequential ingest of the same records builds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_ingest_requests_are_group_committed_with_their_own_outcomes() {
    for db in BOTH {
        let url = fresh_db(db).await;
        let store = std::sync::Arc::new(
            Store::open(&url)
                .await
                .unwrap()
                .with_dedupe_horizon(CENTURY_S),
        );
        store
            .admin()
            .put_pricebook(BOOK, DEC_2_2026_MS)
            .await
            .unwrap();
        // One large request first: 8,000 minutes of 10 GPUs of "big".
        let big: Vec<Vec<u8>> = (0..8_000).map(|i| minute("big", i % 10, i / 10)).collect();
        // Twenty small ones: 50 records each of "small", every other one repeating the
        // previous request's records (duplicates across requests), one malformed record each.
        let small: Vec<Vec<Vec<u8>>> = (0..20u32)
            .map(|r| {
                let base = (r / 2) * 50;
                let mut recs: Vec<Vec<u8>> =
                    (0..50).map(|i| minute("small", 0, base + i)).collect();
                recs.push(format!("{{\"id\":\"bad-{r}\"").into_bytes());
                recs
            })
            .collect();
        let first = {
            let (store, big) = (store.clone(), big.clone());
            tokio::spawn(async move { store.log().ingest(big, DEC_2_2026_MS).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let rest: Vec<_> = small
            .iter()
            .cloned()
            .map(|recs| {
                let store = store.clone();
                tokio::spawn(async move { store.log().ingest(recs, DEC_2_2026_MS).await })
            })
            .collect();
        let first = first.await.unwrap().unwrap();
        assert_eq!(first.len(), 8_000, "{db:?}");
        assert!(
            first.iter().all(|o| matches!(o, Outcome::Accepted)),
            "{db:?}"
        );
        let (mut accepted, mut duplicates, mut rejected) = (0, 0, 0);
        for (r, handle) in rest.into_iter().enumerate() {
            let outcomes = handle.await.unwrap().unwrap();
            assert_eq!(
                outcomes.len(),
                51,
                "{db:?}: request {r} gets its own 51 outcomes"
            );
            assert!(
                matches!(outcomes[50], Outcome::Rejected { .. }),
                "{db:?}: request {r}'s last record is its malformed one: {:?}",
                outcomes[50]
            );
            for o in &outcomes {
                match o {
                    Outcome::Accepted => accepted += 1,
                    Outcome::Duplicate => duplicates += 1,
                    Outcome::Rejected { .. } => rejected += 1,
                }
            }
        }
        assert_eq!((accepted, duplicates, rejected), (500, 500, 20), "{db:?}");
        let groups = store.ingest_groups();
        assert!(
            groups <= 6,
            "{db:?}: 21 requests went in {groups} transactions: not grouped"
        );

        // The same records one request at a time build the same ledgers.
        let seq = Store::open(&fresh_db(db).await)
            .await
            .unwrap()
            .with_dedupe_horizon(CENTURY_S);
        seq.admin()
            .put_pricebook(BOOK, DEC_2_2026_MS)
            .await
            .unwrap();
        seq.log().ingest(big, DEC_2_2026_MS).await.unwrap();
        for recs in small {
            seq.log().ingest(recs, DEC_2_2026_MS).await.unwrap();
        }
        assert_eq!(seq.ingest_groups(), 21);
        assert_eq!(ledger_rows(&store).await, ledger_rows(&seq).await, "{db:?}");
        assert_eq!(
            ledger_rows(&store).await.len(),
            11,
            "{db:?}: 10 + 1 usage keys"
        );
    }
}

/// The stored ledger rows, in key order.
async fn ledger_rows(store: &Store) -> Vec<String> {
    let q = "select key_id || '|' || account || '|' || runs || '|' || coalesce(sources, '') from ledger_keys order by key_id";
    billing_store::db::query(q)
        .fetch_all(store.pool())
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.get::<String, _>(0))
        .collect()
}

/// Issue 12, automatic closing (`serve --close-grace 72h`): a period closes once its end plus
/// the grace has passed on the clock, not a millisecond before; two engines racing on one
/// PostgreSQL close it exactly once (one set of invoices, one closed period); a later period
/// with unpriced usage is refused and reported, not closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn periods_close_automatically_once_at_end_plus_grace_with_two_engines_racing() {
    let url = fresh_db(Db::Postgres).await;
    let a = std::sync::Arc::new(Store::open(&url).await.unwrap());
    let b = std::sync::Arc::new(Store::open(&url).await.unwrap());
    a.admin().put_pricebook(BOOK, DEC_2_2026_MS).await.unwrap();
    let nov = vec![
        usage(
            "n1",
            "alpha",
            "2026-11-03T00:00:00Z",
            "2026-11-03T01:00:00Z",
        ),
        usage("n2", "beta", "2026-11-20T00:00:00Z", "2026-11-20T02:00:00Z"),
    ];
    a.log().ingest(nov, DEC_2_2026_MS).await.unwrap();
    let grace = 72 * 3600;
    // November ends 2026-12-01T00:00Z (UTC book): due at 2026-12-04T00:00Z.
    let due_ms = DEC_2_2026_MS + 2 * 86_400_000;
    let early = a.finance().close_due(due_ms - 1, grace).await.unwrap();
    assert!(
        early.closed.is_empty() && early.blocked.is_none(),
        "{early:?}"
    );
    assert!(!a.finance().period_closed("2026-11").await.unwrap());

    let (ra, rb) = tokio::join!(
        {
            let a = a.clone();
            async move { a.finance().close_due(due_ms, grace).await }
        },
        {
            let b = b.clone();
            async move { b.finance().close_due(due_ms, grace).await }
        }
    );
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert!(
        ra.closed.contains(&"2026-11".to_string()) || rb.closed.contains(&"2026-11".to_string()),
        "{ra:?} {rb:?}"
    );
    let count = |q: &'static str| {
        let a = a.clone();
        async move {
            billing_store::db::query(q)
                .fetch_one(a.pool())
                .await
                .unwrap()
                .get::<i64, _>(0)
        }
    };
    assert_eq!(count("select count(*) from periods").await, 1);
    assert_eq!(
        count("select count(*) from invoices").await,
        2,
        "alpha and beta, once"
    );
    let issued = a.finance().invoices(None, Some("2026-11")).await.unwrap();
    let numbers: Vec<&str> = issued.iter().map(|i| i.number.as_str()).collect();
    assert_eq!(
        numbers,
        ["INV-2026-000001", "INV-2026-000002"],
        "one close, no gap"
    );
    // Asked again later: nothing new.
    let again = b
        .finance()
        .close_due(due_ms + 3_600_000, grace)
        .await
        .unwrap();
    assert!(
        again.closed.is_empty() && again.blocked.is_none(),
        "{again:?}"
    );
    assert_eq!(count("select count(*) from invoices").await, 2);

    // December has usage of an sku the price book does not price: refused, reported, open.
    let dec = vec![
        json!({"specversion":"1.0","id":"d1","source":"node/1","type":"gpu.usage","subject":"alpha",
            "data":{"lease":"L2","resource":"g1","sku":"gpu.unknown","start":"2026-12-10T00:00:00Z","end":"2026-12-10T01:00:00Z"}})
        .to_string()
        .into_bytes(),
    ];
    a.log().ingest(dec, JAN_2_2027_MS).await.unwrap();
    let jan_4 = JAN_2_2027_MS + 2 * 86_400_000;
    let blocked = a.finance().close_due(jan_4, grace).await.unwrap();
    assert!(blocked.closed.is_empty(), "{blocked:?}");
    let (period, why) = blocked.blocked.expect("December is refused");
    assert_eq!(period, "2026-12");
    assert!(
        matches!(why, billing_store::CloseError::Unpriced { .. }),
        "{why}"
    );
    assert!(!a.finance().period_closed("2026-12").await.unwrap());
}

/// Issue 12, numbering: invoice numbers are `{prefix}-{year}-{nnnnnn}`, gapless per year of
/// issue: closes in one year continue one series, the next year starts again at 1, a refused
/// close takes no number and a repeated close issues none (both backends, custom prefix).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoice_numbers_are_gapless_per_series_and_year() {
    for db in BOTH {
        let store = Store::open(&fresh_db(db).await)
            .await
            .unwrap()
            .with_dedupe_horizon(CENTURY_S)
            .with_invoice_prefix("GPU")
            .unwrap();
        assert!(
            Store::open(&fresh_db(db).await)
                .await
                .unwrap()
                .with_invoice_prefix("gpu-1")
                .is_err()
        );
        store
            .admin()
            .put_pricebook(BOOK, DEC_2_2026_MS)
            .await
            .unwrap();
        let events = vec![
            usage(
                "o1",
                "alpha",
                "2026-10-03T00:00:00Z",
                "2026-10-03T01:00:00Z",
            ),
            usage(
                "n1",
                "alpha",
                "2026-11-03T00:00:00Z",
                "2026-11-03T01:00:00Z",
            ),
            usage("n2", "beta", "2026-11-04T00:00:00Z", "2026-11-04T01:00:00Z"),
        ];
        store.log().ingest(events, DEC_2_2026_MS).await.unwrap();
        let numbers = |v: Vec<billing_store::IssuedInvoice>| {
            v.into_iter().map(|i| i.number).collect::<Vec<_>>()
        };
        let nov = numbers(
            store
                .finance()
                .close_period("2026-11", DEC_2_2026_MS)
                .await
                .unwrap(),
        );
        assert_eq!(nov, ["GPU-2026-000001", "GPU-2026-000002"], "{db:?}");
        // Refused (December has not ended): no number taken. Again: the same invoices.
        assert!(
            store
                .finance()
                .close_period("2026-12", DEC_2_2026_MS)
                .await
                .is_err()
        );
        assert_eq!(
            numbers(
                store
                    .finance()
                    .close_period("2026-11", DEC_2_2026_MS + 1)
                    .await
                    .unwrap()
            ),
            nov
        );
        let oct = numbers(
            store
                .finance()
                .close_period("2026-10", DEC_2_2026_MS)
                .await
                .unwrap(),
        );
        assert_eq!(oct, ["GPU-2026-000003", "GPU-2026-000004"], "{db:?}");
        // December closes in 2027: that year's series starts at 1.
        let dec = numbers(
            store
                .finance()
                .close_period("2026-12", JAN_2_2027_MS)
                .await
                .unwrap(),
        );
        assert_eq!(dec, ["GPU-2027-000001", "GPU-2027-000002"], "{db:?}");
    }
}

/// Issue 14: a key rotated on one engine works on both; the old key, revoked on one engine,
/// stops working at once on the other; every change is in the audit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_on_one_engine_stops_working_on_the_other_at_once() {
    use axum::http::StatusCode;
    let url = fresh_db(Db::Postgres).await;
    let a = TestApp::open(&url).await;
    let b = TestApp::open(&url).await;
    let old = a.account("acme").await;
    let (s, _) = b.get("/v1/invoices", &old).await;
    assert_eq!(s, StatusCode::OK);
    // Rotation: a second key, made on engine A, works on B; both keys are listed.
    let (s, v) = a.admin("POST", "/v1/admin/accounts/acme/keys", "").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let new = v["api_key"].as_str().unwrap().to_string();
    let new_id = v["key_id"].as_str().unwrap().to_string();
    assert_eq!(b.get("/v1/invoices", &new).await.0, StatusCode::OK);
    let (_, listed) = b.get("/v1/admin/accounts/acme/keys", ADMIN).await;
    let ids: Vec<String> = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&new_id));
    let old_id = ids.iter().find(|i| **i != new_id).unwrap().clone();
    // Revocation on B: the old key fails at once on A and B; the new one goes on working.
    let (s, v) = b
        .admin(
            "DELETE",
            &format!("/v1/admin/accounts/acme/keys/{old_id}"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    for engine in [&a, &b] {
        assert_eq!(
            engine.get("/v1/invoices", &old).await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(engine.get("/v1/invoices", &new).await.0, StatusCode::OK);
    }
    // Revoking again, a key of nobody, a malformed id: clear 4xx.
    let (s, _) = a
        .admin(
            "DELETE",
            &format!("/v1/admin/accounts/acme/keys/{old_id}"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = a
        .admin("DELETE", "/v1/admin/accounts/acme/keys/not-hex", "")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = a.admin("POST", "/v1/admin/accounts/nobody/keys", "").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // A customer key cannot manage keys.
    let (s, _) = a
        .call(
            "POST",
            "/v1/admin/accounts/acme/keys",
            Some(&new),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // The audit log: create, add, revoke, in order, by the admin.
    let (s, audit) = a.get("/v1/admin/audit", ADMIN).await;
    assert_eq!(s, StatusCode::OK, "{audit}");
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["account.create", "account.key.add", "account.key.revoke"]
    );
    assert_eq!(audit["entries"][2]["actor"], "admin");
    assert_eq!(audit["entries"][2]["command"]["key_id"], old_id.as_str());
}

/// A request with headers the helpers do not set: (status, idempotent-replayed?, body).
async fn with_key(
    t: &TestApp,
    method: &str,
    uri: &str,
    key: &str,
    body: &str,
) -> (axum::http::StatusCode, bool, String) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", format!("Bearer {ADMIN}"))
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let resp = t.app.clone().oneshot(req).await.unwrap();
    let replayed = resp.headers().contains_key("idempotent-replayed");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        replayed,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// Issue 14: `Idempotency-Key` on admin writes. Twenty concurrent retries of one key make
/// one effect (one new API key, not twenty) and all get its answer; the same key with another
/// request is 422; a kept 4xx is answered again; another key is another effect.
async fn concurrent_retries_of_one_idempotency_key_make_one_effect(db: Db) {
    use axum::http::StatusCode;
    let t = std::sync::Arc::new(TestApp::fresh(db).await);
    t.account("acme").await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let t = t.clone();
            tokio::spawn(async move {
                with_key(&t, "POST", "/v1/admin/accounts/acme/keys", "rotate-1", "").await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    assert!(
        answers.iter().all(|(s, _, _)| *s == StatusCode::CREATED),
        "{answers:?}"
    );
    assert!(
        answers.iter().all(|(_, _, b)| *b == answers[0].2),
        "one answer for all"
    );
    assert_eq!(answers.iter().filter(|(_, r, _)| !r).count(), 1, "one ran");
    let (_, keys) = t.get("/v1/admin/accounts/acme/keys", ADMIN).await;
    assert_eq!(keys["keys"].as_array().unwrap().len(), 2, "{keys}");
    // The same key with another request.
    let (s, _, body) = with_key(&t, "POST", "/v1/admin/accounts/beta/keys", "rotate-1", "").await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // A 4xx is kept and answered again.
    let bad = r#"{"id":"no spaces"}"#;
    let first = with_key(&t, "POST", "/v1/admin/accounts", "make-1", bad).await;
    assert_eq!(first.0, StatusCode::BAD_REQUEST);
    let again = with_key(&t, "POST", "/v1/admin/accounts", "make-1", bad).await;
    assert_eq!((again.0, again.1, &again.2), (first.0, true, &first.2));
    // Another key: another effect; a bad key: 400.
    let (s, replayed, _) =
        with_key(&t, "POST", "/v1/admin/accounts/acme/keys", "rotate-2", "").await;
    assert_eq!((s, replayed), (StatusCode::CREATED, false));
    let (_, keys) = t.get("/v1/admin/accounts/acme/keys", ADMIN).await;
    assert_eq!(keys["keys"].as_array().unwrap().len(), 3, "{keys}");
    let (s, _, _) = with_key(&t, "POST", "/v1/admin/accounts/acme/keys", "bad key", "").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}
on_both!(concurrent_retries_of_one_idempotency_key_make_one_effect);

/// A claim whose request died without an answer (found by tests/simulation.rs: the database
/// connection cut between the claim and the release) is taken over once stale, instead of
/// answering "still running" for ever.
async fn a_stale_idempotency_claim_is_taken_over(db: Db) {
    use axum::http::StatusCode;
    let t = TestApp::fresh(db).await;
    t.account("acme").await;
    let fingerprint = billing_api::idempotency_fingerprint(
        "POST",
        "/v1/admin/accounts/acme/keys",
        Some(b"application/json"),
        b"",
    );
    let died_at = DEC_2_2026_MS - billing_store::idempotency::STALE_CLAIM_MS - 1;
    let claim = t
        .state
        .store
        .admin()
        .idempotency_claim("admin", "stuck-1", &fingerprint, died_at)
        .await
        .unwrap();
    assert_eq!(claim, billing_store::Claim::Run);
    let (s, replayed, body) =
        with_key(&t, "POST", "/v1/admin/accounts/acme/keys", "stuck-1", "").await;
    assert_eq!((s, replayed), (StatusCode::CREATED, false), "{body}");
    // And from then on it answers like any kept key.
    let (s, replayed, again) =
        with_key(&t, "POST", "/v1/admin/accounts/acme/keys", "stuck-1", "").await;
    assert_eq!((s, replayed, &again), (StatusCode::CREATED, true, &body));
}
on_both!(a_stale_idempotency_claim_is_taken_over);

/// Issue 14, the engine killed at chosen points: each fail point abandons its transaction
/// once (as a kill would); the client retries; the end state equals a run without faults,
/// invoice numbers included (gapless).
async fn every_fail_point_leaves_nothing_half_written(db: Db) {
    const BOOK: &str = "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu\"]\nrate_per_hour = \"10.00\"\n[tax]\nrate = \"0.06\"\n";
    let ev = |id: &str, account: &str, day: u32, hours: u32| {
        json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
               "data":{"lease":"L1","resource":format!("r-{id}"),"sku":"gpu",
                       "start":format!("2026-11-{day:02}T00:00:00Z"),
                       "end":format!("2026-11-{day:02}T{hours:02}:00:00Z")}})
        .to_string()
    };
    let batches = [
        vec![
            ev("a1", "acme", 3, 2),
            ev("b1", "beta", 3, 1),
            "{\"bad\":1,}".to_string(),
        ],
        vec![ev("a2", "acme", 4, 5), ev("a1", "acme", 3, 2)],
    ];
    // Runs the scenario, retrying each step until it succeeds; answers what it ends with and
    // how many attempts failed.
    async fn run(t: &TestApp, batches: &[Vec<String>]) -> (Vec<String>, u32) {
        let mut failed = 0;
        let mut attempt = async |method: &str, uri: &str, body: String| -> serde_json::Value {
            for _ in 0..5 {
                let (s, v) = t
                    .call(method, uri, Some(ADMIN), "application/json", body.clone())
                    .await;
                if s.is_success() {
                    return v;
                }
                assert!(s.is_server_error(), "{method} {uri}: {s} {v}");
                failed += 1;
            }
            panic!("{method} {uri} never went through");
        };
        for b in batches {
            attempt("POST", "/v1/events", format!("[{}]", b.join(","))).await;
        }
        attempt(
            "POST",
            "/v1/admin/accounts/acme/topups",
            r#"{"amount":"15.00","reference":"wire-1"}"#.into(),
        )
        .await;
        let closed = attempt(
            "POST",
            "/v1/admin/invoices/close?period=2026-11",
            String::new(),
        )
        .await;
        let mut state: Vec<String> = closed
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                format!(
                    "{} {} {} {} {} {}",
                    i["account"], i["number"], i["total"], i["amount_due"], i["paid"], i["status"]
                )
            })
            .collect();
        let store = &t.state.store;
        state.push(format!(
            "events {}",
            store.log().event_count().await.unwrap()
        ));
        state.push(format!(
            "dead letters {}",
            store.log().dead_letters(0, 100).await.unwrap().len()
        ));
        let w = store.finance().wallet("acme").await.unwrap();
        state.push(format!("wallet {} {}", w.balance, w.movements.len()));
        state.push(format!(
            "verify {}",
            store
                .finance()
                .verify(None)
                .await
                .unwrap()
                .differences
                .len()
        ));
        (state, failed)
    }
    let clean = TestApp::fresh(db).await;
    clean.put_pricebook(BOOK).await;
    for a in ["acme", "beta"] {
        clean.account(a).await;
    }
    let (want, failed) = run(&clean, &batches).await;
    assert_eq!(failed, 0);
    assert!(want[0].contains("INV-2026-000001"), "{want:?}");
    for point in billing_store::FAIL_POINTS {
        let t = TestApp::fresh(db).await;
        t.put_pricebook(BOOK).await;
        for a in ["acme", "beta"] {
            t.account(a).await;
        }
        t.state.store.arm_failpoint(point, 0).unwrap();
        let (got, failed) = run(&t, &batches).await;
        assert_eq!(failed, 1, "{point} fired once");
        assert_eq!(got, want, "after {point}");
    }
    assert!(clean.state.store.arm_failpoint("no.such.point", 0).is_err());
}
on_both!(every_fail_point_leaves_nothing_half_written);
