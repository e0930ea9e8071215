//! Issue 14, "found while trying it": each defect reproduced against the engine, with the
//! assertion that failed before its fix. SQLite and PostgreSQL alike where the store is
//! involved.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::sync::Arc;

const BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"

[egress.internet]
tiers = [ { rate_per_gb = "0.000001" } ]
"#;

fn usage(id: &str, subject: &str, resource: &str, start: &str, end: &str) -> String {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":subject,
        "data":{"lease":"L1","resource":resource,"sku":"gpu.h100","start":start,"end":end,"quantity":"1"}})
    .to_string()
}

fn reasons(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["reason"]
                .as_str()
                .unwrap_or(r["status"].as_str().unwrap())
                .to_string()
        })
        .collect()
}

/// Finding 1: `group_by=resource` at second granularity over thousands of resources built
/// the whole answer in memory. Groups are now paginated and every page is bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_queries_are_bounded_and_groups_paginate() {
    let t = TestApp::fresh(Db::Sqlite).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let events: Vec<String> = (0..1500)
        .map(|n| {
            usage(
                &format!("e{n}"),
                "acme",
                &format!("gpu-{n:05}"),
                "2026-11-03T10:00:00Z",
                "2026-11-03T10:00:10Z",
            )
        })
        .collect();
    t.ingest(&events).await;
    let base = "/v1/usage?from=2026-11-03T10:00:00Z&to=2026-11-03T10:00:10Z&granularity=second&group_by=resource";
    let (s, v) = t.get(base, &key).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 100, "a page carries the default 100 groups");
    assert_eq!(v["next_group_after"], "gpu-00099");
    // Every group, page by page, adds up to the usage sent.
    let (mut seen, mut total, mut after) = (0, 0u64, None::<String>);
    loop {
        let uri = match &after {
            Some(a) => format!("{base}&group_limit=1000&group_after={a}"),
            None => format!("{base}&group_limit=1000"),
        };
        let (s, v) = t.get(&uri, &key).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let groups = v["groups"].as_array().unwrap();
        let cells: usize = groups
            .iter()
            .map(|g| g["buckets"].as_array().unwrap().len())
            .sum();
        assert!(cells <= 100_000, "{cells} cells in one page");
        seen += groups.len();
        for g in groups {
            for b in g["buckets"].as_array().unwrap() {
                total += b["unit_seconds"].as_str().unwrap().parse::<u64>().unwrap();
            }
        }
        match v["next_group_after"].as_str() {
            Some(a) => after = Some(a.to_string()),
            None => break,
        }
    }
    assert_eq!((seen, total), (1500, 15_000));
    // Too much at once is refused with a 4xx in the API's error shape.
    let (s, v) = t.get(&format!("{base}&group_limit=5000"), &key).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"], "bad_request");
}

/// Finding 2: an event from before 1970 belonged to no period and froze the account's
/// provisional cost for its batch. Events outside 2000..2100 are dead-lettered now, and the
/// rest of the batch moves the cost as it should.
async fn events_outside_the_supported_range_are_refused_and_cost_stays_current(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let v = t
        .ingest(&[
            usage(
                "old",
                "acme",
                "g0",
                "1969-12-31T23:00:00Z",
                "1969-12-31T23:10:00Z",
            ),
            usage(
                "now",
                "acme",
                "g0",
                "2026-12-01T00:00:00Z",
                "2026-12-01T01:00:00Z",
            ),
        ])
        .await;
    assert_eq!(reasons(&v), ["time_out_of_range", "accepted"]);
    let (s, cost) = t.get("/v1/cost/current", &key).await;
    assert_eq!(s, StatusCode::OK, "{cost}");
    assert_eq!(cost["invoice"]["total"], "36.00", "{cost}");
    assert!(!cost["position"].is_null(), "{cost}");
}
on_both!(events_outside_the_supported_range_are_refused_and_cost_stays_current);

/// Finding 3: two events a lifetime apart made a batch re-rate every period between them.
async fn a_batch_re_rates_only_the_periods_holding_its_seconds(db: Db) {
    let url = fresh_db(db).await;
    let store = billing_store::Store::open(&url)
        .await
        .unwrap()
        .with_max_future(100 * 365 * 86_400);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let records: Vec<Vec<u8>> = [
        usage(
            "a",
            "acme",
            "g0",
            "2026-12-01T00:00:00Z",
            "2026-12-01T00:01:00Z",
        ),
        usage(
            "b",
            "acme",
            "g0",
            "2099-01-01T00:00:00Z",
            "2099-01-01T00:01:00Z",
        ),
    ]
    .iter()
    .map(|e| e.as_bytes().to_vec())
    .collect();
    let t0 = std::time::Instant::now();
    store.log().ingest(records, DEC_2_2026_MS).await.unwrap();
    let rows: Vec<String> =
        billing_store::db::query("select period from provisional_costs order by period")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
    assert_eq!(rows, ["2026-12", "2099-01"], "took {:?}", t0.elapsed());
}
on_both!(a_batch_re_rates_only_the_periods_holding_its_seconds);

/// Finding 5: oversize records were stored whole in the log and the dead letters.
async fn oversize_records_keep_a_bounded_prefix_and_a_digest(db: Db) {
    let t = TestApp::fresh(db).await;
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(1 << 20));
    let ok = usage(
        "ok",
        "acme",
        "g0",
        "2026-11-03T10:00:00Z",
        "2026-11-03T10:01:00Z",
    );
    let v = t.ingest(&[big.clone(), big.clone(), ok]).await;
    assert_eq!(
        reasons(&v),
        ["record_too_large", "record_too_large", "accepted"]
    );
    let (s, d) = t
        .admin("GET", "/v1/admin/dead-letters?limit=1000", "")
        .await;
    assert_eq!(s, StatusCode::OK);
    for dl in d["dead_letters"].as_array().unwrap() {
        assert!(dl["payload"].as_str().unwrap().len() <= 1024);
        assert!(dl["detail"].as_str().unwrap().contains("sha256"), "{dl}");
    }
    let longest: Option<i64> = billing_store::db::query("select max(length(payload)) from log")
        .fetch_one(t.state.store.pool())
        .await
        .unwrap()
        .get(0);
    assert!(
        longest.unwrap() < 2048,
        "log keeps {longest:?} bytes of a record"
    );
    let (s, _) = t
        .admin("GET", "/v1/admin/dead-letters?limit=1001", "")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}
on_both!(oversize_records_keep_a_bounded_prefix_and_a_digest);

/// Finding 6: closing a period that has not ended issued invoices that could never change.
async fn periods_that_have_not_ended_cannot_be_closed(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    for period in ["2026-12", "2027-03"] {
        let (s, v) = t
            .admin(
                "POST",
                &format!("/v1/admin/invoices/close?period={period}"),
                "",
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{v}");
        assert!(v["message"].as_str().unwrap().contains("not ended"), "{v}");
    }
    let (s, v) = t
        .admin(
            "GET",
            "/v1/admin/exports/invoices?period=2026-12&format=jsonl",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v, Value::String(String::new()), "no invoice was issued");
    t.close("2026-11").await;
}
on_both!(periods_that_have_not_ended_cannot_be_closed);

/// Finding 7: late usage of an account that had no invoice in the closed period was
/// accepted and never surfaced.
async fn late_usage_of_an_account_without_an_invoice_is_a_pending_adjustment(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.ingest(&[usage(
        "a1",
        "acme",
        "g0",
        "2026-11-03T10:00:00Z",
        "2026-11-03T11:00:00Z",
    )])
    .await;
    t.close("2026-11").await;
    let v = t
        .ingest(&[usage(
            "n1",
            "newco",
            "g9",
            "2026-11-10T00:00:00Z",
            "2026-11-10T16:00:00Z",
        )])
        .await;
    assert_eq!(reasons(&v), ["accepted"]);
    let (s, v) = t
        .admin("GET", "/v1/admin/adjustments?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let pending = v["pending_adjustments"].as_array().unwrap();
    let newco = pending
        .iter()
        .find(|p| p["account"] == "newco")
        .unwrap_or_else(|| panic!("newco's late usage is not surfaced: {v}"));
    assert_eq!(newco["original_invoice"], Value::Null);
    assert_eq!(newco["difference"], "576.00", "16 h at 36.00: {newco}");
}
on_both!(late_usage_of_an_account_without_an_invoice_is_a_pending_adjustment);

/// Finding 8: any string was a billable subject; finding 9: one record that is not JSON
/// failed the whole batch; finding 11: egress above i64::MAX bytes was clamped.
async fn hostile_records_in_a_batch_are_dead_lettered_one_by_one(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let good = usage(
        "g1",
        "acme",
        "g0",
        "2026-11-03T10:00:00Z",
        "2026-11-03T10:01:00Z",
    );
    let egress = r#"{"specversion":"1.0","id":"x1","source":"gw/1","type":"net.egress","subject":"acme","time":"2026-11-03T10:00:00Z","data":{"dest":"internet","bytes":18446744073709551615}}"#;
    let body = format!(
        "[{good},{},{},{{\"id\":\"bad\\q\"}},{{\"raw\":\"a\u{1}b\"}},{{\"a\":1,}},{egress}]",
        usage(
            "s1",
            "' OR 1=1; --",
            "g0",
            "2026-11-03T10:00:00Z",
            "2026-11-03T10:01:00Z"
        ),
        usage(
            "s2",
            "tenant-a\u{0}",
            "g0",
            "2026-11-03T10:00:00Z",
            "2026-11-03T10:01:00Z"
        ),
    );
    let (s, v) = t
        .call("POST", "/v1/events", Some(INGEST), "application/json", body)
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        reasons(&v),
        [
            "accepted",
            "bad_subject",
            "control_character",
            "malformed_json",
            "malformed_json",
            "malformed_json",
            "accepted"
        ]
    );
    let closed = t.close("2026-11").await;
    let accounts: Vec<&str> = closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["account"].as_str().unwrap())
        .collect();
    assert_eq!(accounts, ["acme"]);
    // The engine's invoice equals the offline rater's, u64::MAX bytes of egress included.
    let offline = offline_invoices(BOOK, &[good, egress.to_string()], "2026-11");
    assert_eq!(section6(&closed[0]), offline[0]);
    assert_eq!(offline[0]["lines"][0]["amount"], "18446.74");
    // A body that is not an array at all is still one clear 400.
    let (s, v) = t
        .call(
            "POST",
            "/v1/events",
            Some(INGEST),
            "application/json",
            "[{\"a\":1} {",
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
}
on_both!(hostile_records_in_a_batch_are_dead_lettered_one_by_one);

/// Events ending further in the future than the clock allows are `too_early`.
async fn events_from_the_future_are_too_early(db: Db) {
    let t = TestApp::fresh(db).await;
    // The test clock is 2026-12-02T00:00:00Z; the default limit is one day.
    let v = t
        .ingest(&[
            usage(
                "f1",
                "acme",
                "g0",
                "2026-12-02T23:59:00Z",
                "2026-12-03T00:00:00Z",
            ),
            usage(
                "f2",
                "acme",
                "g0",
                "2026-12-02T23:59:00Z",
                "2026-12-03T00:00:01Z",
            ),
        ])
        .await;
    assert_eq!(reasons(&v), ["accepted", "too_early"]);
}
on_both!(events_from_the_future_are_too_early);

/// Findings 10, 13, 14: authorizations and quotas read the event grammar; strings are
/// bounded; money has two decimals.
async fn authorizations_and_quotas_read_exact_numbers_and_bounded_strings(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    let authorize = |body: Value| {
        let t = &t;
        async move {
            t.call(
                "POST",
                "/v1/authorize",
                Some(INGEST),
                "application/json",
                body.to_string(),
            )
            .await
        }
    };
    for q in ["1e3", "1_000", "0.0000000000000000000000001", "lots"] {
        let (s, v) =
            authorize(json!({"account":"acme","sku":"gpu.h100","quantity":q,"seconds":60})).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{q}: {v}");
    }
    let (s, v) =
        authorize(json!({"account":"acme","sku":"gpu.h100","quantity":1.5,"seconds":60})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "a JSON float: {v}");
    let (s, v) = authorize(json!({"account":"acme","sku":"gpu.h100","quantity":"1","seconds":60,"lease":"l".repeat(1 << 20)})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = authorize(
        json!({"account":"acme","sku":"gpu.h100","quantity":"0.000000000000001","seconds":1}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        v["amount"], "0.01",
        "a hold is never 0.00 for a priced sku: {v}"
    );
    let (s, v) =
        authorize(json!({"account":"acme","sku":"gpu.h100","quantity":2,"seconds":60})).await;
    assert_eq!(
        (s, v["amount"].as_str()),
        (StatusCode::OK, Some("1.20")),
        "{v}"
    );
    for body in [
        json!({"prepaid_balance":"0.005"}),
        json!({"spend_limit":"1e3"}),
        json!({"gpu_hours":{"gpu.h100":"1_000"}}),
    ] {
        let (s, v) = t
            .admin("PUT", "/v1/admin/accounts/acme/quotas", body.to_string())
            .await;
        assert!(s.is_client_error(), "{body}: {s} {v}");
        assert!(v["message"].is_string(), "{v}");
    }
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            json!({"prepaid_balance":"100.50","gpu_hours":{"gpu.h100":"0.5"}}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}
on_both!(authorizations_and_quotas_read_exact_numbers_and_bounded_strings);

/// Finding 17: axum's own rejections answer in the API's JSON error shape; per-key rate
/// limits answer 429 with Retry-After.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_is_json_and_rate_limits_answer_429() {
    let mut t = TestApp::fresh(Db::Sqlite).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .get(
            "/v1/usage?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&group_limit=abc",
            &key,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(v["error"], "bad_request", "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("group_limit"),
        "{v}"
    );
    let (s, v) = t
        .call(
            "POST",
            "/v1/events",
            Some(INGEST),
            "application/json",
            vec![b' '; billing_api::MAX_BODY_BYTES + 1],
        )
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(v["error"], "too_large", "{v}");
    let (s, v) = t
        .call("DELETE", "/v1/usage", Some(&key), "application/json", "")
        .await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(v["error"], "method_not_allowed", "{v}");

    use billing_api::limits::{Rate, RateLimiter, RateLimits};
    t.state.limiter = Arc::new(RateLimiter::new(RateLimits {
        customer: Some(Rate {
            per_second: 1,
            burst: 2,
        }),
        ..RateLimits::default()
    }));
    t.app = billing_api::router(t.state.clone());
    let uri = "/v1/usage?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z";
    assert_eq!(t.get(uri, &key).await.0, StatusCode::OK);
    assert_eq!(t.get(uri, &key).await.0, StatusCode::OK);
    let resp = {
        use tower::ServiceExt;
        let req = axum::http::Request::get(uri)
            .header("authorization", format!("Bearer {key}"))
            .body(axum::body::Body::empty())
            .unwrap();
        t.app.clone().oneshot(req).await.unwrap()
    };
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(resp.headers()["retry-after"], "1");
    // The ingest token has its own (here unlimited) bucket.
    assert_eq!(t.ingest(&[]).await["accepted"], 0);
}

/// Finding 4: no HTTP timeouts. Half-open connections and partial bodies are cut, and the
/// number of connections served at once is bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_times_out_slow_clients_and_bounds_connections() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let t = TestApp::fresh(Db::Sqlite).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = billing_api::limits::ServerLimits {
        header_read_timeout: Duration::from_millis(500),
        body_read_timeout: Duration::from_millis(500),
        max_connections: 2,
    };
    tokio::spawn(billing_api::limits::serve(
        listener,
        t.app.clone(),
        limits,
        std::future::pending(),
    ));
    async fn answer(c: &mut tokio::net::TcpStream, within: Duration) -> Option<String> {
        let mut buf = vec![0u8; 4096];
        match tokio::time::timeout(within, c.read(&mut buf)).await {
            Ok(Ok(n)) => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Ok(Err(_)) => Some(String::new()),
            Err(_) => None,
        }
    }
    // Half-open: headers never finished. Closed within the header timeout.
    let mut half = tokio::net::TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let t0 = Instant::now();
    let got = answer(&mut half, Duration::from_secs(5)).await;
    assert!(got.is_some(), "a half-open connection was held over 5 s");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // A partial body: 408 within the body timeout.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"a\":")
        .await
        .unwrap();
    let got = answer(&mut slow, Duration::from_secs(5))
        .await
        .unwrap_or_default();
    assert!(got.starts_with("HTTP/1.1 408"), "{got:?}");
    // Two idle connections hold both slots: a third client waits until they are cut.
    let mut idle: Vec<tokio::net::TcpStream> = Vec::new();
    for _ in 0..2 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut third = tokio::net::TcpStream::connect(addr).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let t0 = Instant::now();
    let got = answer(&mut third, Duration::from_secs(5))
        .await
        .unwrap_or_default();
    assert!(got.starts_with("HTTP/1.1 200"), "{got:?}");
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "served at once although both connection slots were held ({:?})",
        t0.elapsed()
    );
}

/// The campaign's valid events: 500 minutes of usage, for two accounts, each its own key.
fn campaign_valid() -> Vec<String> {
    (0..500)
        .map(|i| {
            let start = 1_793_700_000 + i * 60; // 2026-11-04T...
            let rfc = |s: i64| {
                chrono::DateTime::from_timestamp(s, 0)
                    .unwrap()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            };
            usage(
                &format!("v{i}"),
                if i % 2 == 0 { "acme" } else { "beta" },
                &format!("r{i}"),
                &rfc(start),
                &rfc(start + 60),
            )
        })
        .collect()
}

/// Hostile record `n`: certainly invalid, in one of 20 ways picked by `n` (the parameters
/// vary with a hash of `n`). Kinds 0 and 1 break a batch's framing (a truncated record, a
/// lone quote): they travel alone.
fn hostile(n: u64) -> (bool, String) {
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let base = usage(
        &format!("h{n}"),
        "acme",
        "g0",
        "2026-11-03T10:00:00Z",
        "2026-11-03T10:01:00Z",
    );
    let with = |from: &str, to: &str| base.replacen(from, to, 1);
    let record = match n % 20 {
        0 => base[..1 + next(base.len() as u64 - 2) as usize].to_string(),
        1 => format!("{{\"id\":\"{}", "x".repeat(next(50) as usize)),
        2 => with("\"specversion\":\"1.0\"", "\"specversion\":\"0.3\""),
        3 => with(
            "\"subject\":\"acme\"",
            [
                "\"subject\":\"\"",
                "\"subject\":\"a/b\"",
                "\"subject\":\"x\\u0000\"",
                "\"subject\":\"ü\"",
                "\"subject\":7",
            ][next(5) as usize],
        ),
        4 => with(
            "\"quantity\":\"1\"",
            [
                "\"quantity\":\"1e3\"",
                "\"quantity\":\"1_000\"",
                "\"quantity\":\"-1\"",
                "\"quantity\":\"NaN\"",
                "\"quantity\":\"0x10\"",
                "\"quantity\":\"99999999\"",
            ][next(6) as usize],
        ),
        5 => with(
            "\"end\":\"2026-11-03T10:01:00Z\"",
            "\"end\":\"2026-11-03T09:59:00Z\"",
        ),
        6 => with("2026-11-03T10:00:00Z", "1969-12-31T23:00:00Z"),
        7 => with(&format!("\"id\":\"h{n}\","), ""),
        8 => with("\"type\":\"gpu.usage\"", "\"type\":\"gpu.usagee\""),
        9 => {
            let data = base.find("\"data\":").unwrap();
            format!("{}\"data\":[1,2]}}", &base[..data])
        }
        10 => with("\"lease\":\"L1\"", "\"lease\":\"L\\q\""),
        11 => format!("{},}}", &base[..base.len() - 1]),
        12 => with("\"lease\":\"L1\"", "\"lease\":\"L\u{1}1\""),
        13 => {
            let depth = 2000 + next(5000) as usize;
            format!("{}{}", "[".repeat(depth), "]".repeat(depth))
        }
        14 => json!({"specversion":"1.0","id":format!("h{n}"),"source":"gw/1","type":"net.egress",
                "subject":"acme","time":"2026-11-03T10:00:00Z",
                "data":{"dest":"internet","bytes":"18446744073709551616"}})
        .to_string(),
        15 => with(
            "2026-11-03T10:00:00Z",
            ["2026-13-40T99:00:00Z", "yesterday", "2026-11-03 10:00"][next(3) as usize],
        ),
        16 => ["42", "\"str\"", "null", "[]", "true", "not an event \u{0}"][next(6) as usize]
            .to_string(),
        // NUL escaped inside an attribute: a control character, not text to store.
        _ if n % 40 == 19 => with("\"source\":\"node/1\"", "\"source\":\"node\\u0000/1\""),
        17 => with(
            "\"lease\":\"L1\"",
            &format!("\"lease\":\"{}\"", "L".repeat(257 + next(1000) as usize)),
        ),
        18 => with("2026-11-03T10:01:00Z", "2030-01-01T00:00:00Z"),
        // A redelivery of a valid event with other content: a conflict.
        _ => usage(
            &format!("v{}", next(500)),
            "acme",
            "other",
            "2026-11-05T00:00:00Z",
            "2026-11-05T00:01:00Z",
        ),
    };
    (matches!(n % 20, 0 | 1), record)
}

/// Every dead letter, page by page.
async fn all_dead_letters(store: &billing_store::Store) -> Vec<billing_store::DeadLetter> {
    let mut out = Vec::new();
    loop {
        let after = out.last().map_or(0, |d: &billing_store::DeadLetter| d.seq);
        let page = store.log().dead_letters(after, 1000).await.unwrap();
        if page.is_empty() {
            return out;
        }
        out.extend(page);
    }
}

/// Issue 14's hostile-input campaign over HTTP: 10,000 generated hostile records around 500
/// valid events: no 5xx, every hostile one dead-lettered with a reason, the valid ones billed
/// exactly as the offline rater bills them.
async fn ten_thousand_hostile_records_over_http_are_dead_lettered_and_the_valid_billed(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let valid = campaign_valid();
    let v = t.ingest(&valid).await;
    assert_eq!(v["accepted"], 500, "{v}");
    let (alone, batched): (Vec<_>, Vec<_>) = (0..10_000u64).map(hostile).partition(|(a, _)| *a);
    let mut rejected = 0;
    for chunk in batched.chunks(500) {
        let body = format!(
            "[{}]",
            chunk
                .iter()
                .map(|(_, r)| r.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        let (s, v) = t
            .call("POST", "/v1/events", Some(INGEST), "application/json", body)
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        for (r, (_, record)) in v["results"].as_array().unwrap().iter().zip(chunk) {
            assert_eq!(r["status"], "rejected", "{record}: {r}");
            assert!(r["reason"].as_str().is_some_and(|x| !x.is_empty()), "{r}");
        }
        rejected += chunk.len();
    }
    for (_, record) in &alone {
        let (s, v) = t
            .call(
                "POST",
                "/v1/events",
                Some(INGEST),
                "application/cloudevents+json",
                record.clone(),
            )
            .await;
        assert!(!s.is_server_error(), "{s}: {v}");
        assert_eq!(s, StatusCode::OK, "{record}: {v}");
        assert_eq!(v["rejected"], 1, "{record}: {v}");
        rejected += 1;
    }
    assert_eq!(rejected, 10_000);
    let dead = all_dead_letters(&t.state.store).await;
    assert_eq!(dead.len(), 10_000);
    assert!(dead.iter().all(|d| !d.reason.as_str().is_empty()));
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 500);
    let closed = t.close("2026-11").await;
    let offline = offline_invoices(BOOK, &valid, "2026-11");
    let issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline);
}
on_both!(ten_thousand_hostile_records_over_http_are_dead_lettered_and_the_valid_billed);

/// The same campaign through Kafka: one partition, the valid events first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_hostile_records_over_kafka_are_dead_lettered_and_the_valid_billed() {
    let t = TestApp::fresh(Db::Postgres).await;
    t.put_pricebook(BOOK).await;
    let topic = topic_with_partitions(1).await;
    let valid = campaign_valid();
    let mut records: Vec<(String, Vec<u8>)> = valid
        .iter()
        .map(|v| ("k".to_string(), v.clone().into_bytes()))
        .collect();
    records.extend((0..10_000u64).map(|n| ("k".to_string(), hostile(n).1.into_bytes())));
    produce_keyed(&topic, &records).await;
    consume_until_offsets(&t, &topic, 500, Some(records.len() as i64)).await;
    let dead = all_dead_letters(&t.state.store).await;
    assert_eq!(dead.len(), 10_000);
    assert!(dead.iter().all(|d| !d.reason.as_str().is_empty()));
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 500);
    let closed = t.close("2026-11").await;
    let offline = offline_invoices(BOOK, &valid, "2026-11");
    let issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline);
}

// ---- issue 24 (hostile-client API defects), items 4 to 8 ------------------------------------

/// The app with its limiter set to `limits`.
fn limited(mut t: TestApp, limits: billing_api::limits::RateLimits) -> TestApp {
    t.state.limiter = Arc::new(billing_api::limits::RateLimiter::new(limits));
    t.app = billing_api::router(t.state.clone());
    t
}

fn one_per_second_burst(burst: u32) -> Option<billing_api::limits::Rate> {
    Some(billing_api::limits::Rate {
        per_second: 1,
        burst,
    })
}

/// Issue 24.8: rate limits were per account while the README and `--help` say per key. A
/// second key of the same account keeps working when the first has emptied its bucket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_per_key_not_per_account() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let first = t.account("acme").await;
    let (s, v) = t.admin("POST", "/v1/admin/accounts/acme/keys", "").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let second = v["api_key"].as_str().unwrap().to_string();
    let t = limited(
        t,
        billing_api::limits::RateLimits {
            customer: one_per_second_burst(2),
            ..Default::default()
        },
    );
    let uri = "/v1/invoices";
    assert_eq!(t.get(uri, &first).await.0, StatusCode::OK);
    assert_eq!(t.get(uri, &first).await.0, StatusCode::OK);
    let (s, v) = t.get(uri, &first).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{v}");
    // The account's other key has a bucket of its own.
    let (s, v) = t.get(uri, &second).await;
    assert_eq!(
        s,
        StatusCode::OK,
        "the second key of the account was limited: {v}"
    );
    assert_eq!(t.get(uri, &second).await.0, StatusCode::OK);
    assert_eq!(t.get(uri, &second).await.0, StatusCode::TOO_MANY_REQUESTS);
}

/// Issue 24.7: the audit log said `admin` for what the engine did by itself. An automatic
/// close (`serve --close-grace` calls `Store::close_due`) is `system:autoclose`; a close by
/// the admin token is `admin`, also on the commands' outbox header.
async fn the_audit_log_tells_the_automatic_close_from_the_admins(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    t.ingest(&[
        usage(
            "n1",
            "acme",
            "g0",
            "2026-11-03T10:00:00Z",
            "2026-11-03T11:00:00Z",
        ),
        usage(
            "d1",
            "acme",
            "g0",
            "2026-12-01T10:00:00Z",
            "2026-12-01T11:00:00Z",
        ),
    ])
    .await;
    // The engine's own task closes November (due on the 2nd of December, no grace).
    let done = t
        .state
        .store
        .finance()
        .close_due(DEC_2_2026_MS, 0)
        .await
        .unwrap();
    assert_eq!(done.closed, ["2026-11"]);
    // The admin closes December by hand.
    let t = t.at(JAN_2_2027_MS);
    t.close("2026-12").await;
    let (s, audit) = t.get("/v1/admin/audit", ADMIN).await;
    assert_eq!(s, StatusCode::OK, "{audit}");
    let closes: Vec<(String, String)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "period.close")
        .map(|e| {
            (
                e["command"]["period"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                e["actor"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        closes,
        [
            ("2026-11".to_string(), "system:autoclose".to_string()),
            ("2026-12".to_string(), "admin".to_string())
        ],
        "{audit}"
    );
    // The price book and the account were the admin token's.
    for e in audit["entries"].as_array().unwrap() {
        if e["action"] == "pricebook.put" || e["action"] == "account.create" {
            assert_eq!(e["actor"], "admin", "{e}");
        }
    }
}
on_both!(the_audit_log_tells_the_automatic_close_from_the_admins);

/// A request with an `Idempotency-Key`: (status, replayed?, body).
async fn keyed(
    t: &TestApp,
    (method, uri, ctype): (&str, &str, &str),
    key: &str,
    body: &str,
) -> (StatusCode, bool, Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", format!("Bearer {ADMIN}"))
        .header("content-type", ctype)
        .header("idempotency-key", key)
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let resp = t.app.clone().oneshot(req).await.unwrap();
    let replayed = resp.headers().contains_key("idempotent-replayed");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, replayed, v)
}

/// Issue 24.4: an `Idempotency-Key` kept the answer of requests that never ran (a 415 for the
/// wrong content type, a 429), replaying it for ever. Only the answer of a request whose
/// handler ran is kept, and the content type is part of the request.
async fn an_idempotency_key_keeps_only_answers_of_requests_that_ran(db: Db) {
    let t = TestApp::fresh(db).await;
    t.account("acme").await;
    let body = r#"{"amount":"10.00","reference":"wire-1"}"#;
    let topup = "/v1/admin/accounts/acme/topups";
    // The wrong content type: 415, not kept.
    let (s, replayed, v) = keyed(&t, ("POST", topup, "text/plain"), "k-415", body).await;
    assert_eq!(
        (s, replayed),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, false),
        "{v}"
    );
    // The same key with the right content type runs.
    let (s, replayed, v) = keyed(&t, ("POST", topup, "application/json"), "k-415", body).await;
    assert_eq!((s, replayed), (StatusCode::CREATED, false), "{v}");
    assert_eq!(v["balance"], "10.00", "{v}");
    // From then on it is kept: the same request is replayed, another content type is
    // another request (422), not the kept answer.
    let (s, replayed, _) = keyed(&t, ("POST", topup, "application/json"), "k-415", body).await;
    assert_eq!((s, replayed), (StatusCode::CREATED, true));
    let (s, _, v) = keyed(&t, ("POST", topup, "text/plain"), "k-415", body).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");

    // Rate limited: 429, not kept; once the bucket refills the same key runs.
    let t = limited(
        t,
        billing_api::limits::RateLimits {
            admin: one_per_second_burst(1),
            ..Default::default()
        },
    );
    let body = r#"{"amount":"5.00","reference":"wire-2"}"#;
    let json = ("POST", topup, "application/json");
    assert_eq!(t.get("/v1/admin/audit", ADMIN).await.0, StatusCode::OK);
    let (s, replayed, v) = keyed(&t, json, "k-429", body).await;
    assert_eq!((s, replayed), (StatusCode::TOO_MANY_REQUESTS, false), "{v}");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (s, replayed, v) = keyed(&t, json, "k-429", body).await;
    assert_eq!((s, replayed), (StatusCode::CREATED, false), "{v}");
    assert_eq!(v["balance"], "15.00", "{v}");
}
on_both!(an_idempotency_key_keeps_only_answers_of_requests_that_ran);

/// Issue 24.5: money routes accepted a repeated JSON member and kept the last
/// (`{"amount":"5.00","reference":"a","amount":"500.00"}` credited 500.00). Every route that
/// takes a JSON body (each operation of `/openapi.json` with an `application/json` body, so a
/// new route is walked too) refuses a repeated member with a 400 naming it, nested ones too,
/// and nothing happens.
async fn every_json_body_refuses_a_repeated_member(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let customer = t.account("acme").await;
    let (s, doc) = t.call("GET", "/openapi.json", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    let mut walked = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op["requestBody"]["content"]["application/json"].is_null() {
                continue;
            }
            let uri = path
                .replace("{id}", "acme")
                .replace("{kind}", "credits")
                .replace("{term_id}", "t1")
                .replace(['{', '}'], "");
            let method = method.to_uppercase();
            for (body, member) in [
                (r#"{"probe":1,"probe":2}"#, "probe"),
                (r#"{"outer":{"inner":1,"inner":2}}"#, "inner"),
                (
                    r#"{"amount":"5.00","reference":"a","amount":"500.00"}"#,
                    "amount",
                ),
            ] {
                let (s, v) = t.admin(&method, &uri, body).await;
                assert_eq!(s, StatusCode::BAD_REQUEST, "{method} {uri} {body}: {v}");
                let message = v["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(&format!("duplicate member \"{member}\"")),
                    "{method} {uri} {body}: {v}"
                );
            }
            // The token is checked first: a customer key on an admin route is still a 403.
            if path.starts_with("/v1/admin/") {
                let dup = r#"{"probe":1,"probe":2}"#;
                let (s, v) = t
                    .call(&method, &uri, Some(&customer), "text/plain", dup)
                    .await;
                assert_eq!(s, StatusCode::FORBIDDEN, "{method} {uri}: {v}");
            }
            walked.push(format!("{method} {path}"));
        }
    }
    // The routes of issue 24.5's report are among them.
    for route in [
        "POST /v1/admin/accounts/{id}/topups",
        "POST /v1/admin/accounts/{id}/refunds",
        "POST /v1/admin/invoices/{id}/payments",
        "PUT /v1/admin/accounts/{id}/terms/{kind}/{term_id}",
        "PUT /v1/admin/accounts/{id}/quotas",
        "PUT /v1/admin/accounts/{id}/profile",
        "PUT /v1/admin/seller",
        "POST /v1/admin/accounts",
        "POST /v1/authorize",
        "POST /v1/holds/{id}/extend",
    ] {
        assert!(
            walked.iter().any(|w| w == route),
            "{route} not walked: {walked:?}"
        );
    }
    // Nothing was credited.
    let (s, b) = t.get("/v1/balance?account=acme", ADMIN).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (_, wallet_audit) = t.get("/v1/admin/audit", ADMIN).await;
    assert!(
        !wallet_audit.to_string().contains("wallet.movement"),
        "{wallet_audit}"
    );
    // The same body without the repetition goes through.
    let (s, v) = t
        .admin(
            "POST",
            "/v1/admin/accounts/acme/topups",
            r#"{"amount":"5.00","reference":"a"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["balance"], "5.00", "{v}");
}
on_both!(every_json_body_refuses_a_repeated_member);

async fn pricebook_status(t: &TestApp, toml: &str) -> (StatusCode, Value) {
    t.call(
        "PUT",
        "/v1/admin/pricebook",
        Some(ADMIN),
        "application/toml",
        toml.to_string(),
    )
    .await
}

/// Issue 24.6: the price book accepted a NUL inside `currency` and empty or newline sku and
/// egress names; buyer names made only of U+202E and U+200B passed "not blank". Every name
/// follows `billing_core::text::check_name`, the currency is an ISO 4217 code.
async fn names_refuse_control_and_invisible_only_text(db: Db) {
    let t = TestApp::fresh(db).await;
    for (name, book) in [
        ("NUL in currency", BOOK.replace("\"USD\"", "\"US\\u0000D\"")),
        ("lower-case currency", BOOK.replace("\"USD\"", "\"usd\"")),
        ("empty sku", BOOK.replace("\"gpu.h100\"", "\"\"")),
        (
            "newline in sku",
            BOOK.replace("\"gpu.h100\"", "\"gpu.h100\\n\""),
        ),
        (
            "invisible sku",
            BOOK.replace("\"gpu.h100\"", "\"\\u202E\\u200B\""),
        ),
        (
            "newline in egress",
            BOOK.replace("egress.internet", "egress.\"inter\\nnet\""),
        ),
        (
            "control in a term's account",
            format!("{BOOK}\n[[credits]]\naccount = \"ac\\tme\"\namount = \"5.00\"\n"),
        ),
    ] {
        let (s, v) = pricebook_status(&t, &book).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {v}");
    }
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    let profile = "/v1/admin/accounts/acme/profile";
    for name in [
        "\u{202E}\u{200B}",
        " \u{200B} ",
        "\u{FEFF}",
        "ac\u{0}me",
        "ac\nme",
    ] {
        let (s, v) = t
            .admin("PUT", profile, json!({ "name": name }).to_string())
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name:?}: {v}");
        assert!(v["message"].as_str().unwrap().contains("name"), "{v}");
    }
    let (s, v) = t
        .admin(
            "PUT",
            profile,
            json!({ "name": "北京某某科技有限公司" }).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}
on_both!(names_refuse_control_and_invisible_only_text);

/// Issue 24.6: dates of terms had no range (a credit from 0000-01-01 to 9999-12-31 was
/// accepted) while events must lie in 2000..=2100. Every instant of a price book and of a
/// term set through the API now lies in the events' range.
async fn dates_of_terms_and_price_books_lie_in_the_events_range(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    let credit = "/v1/admin/accounts/acme/terms/credits/forever";
    for (from, to) in [
        ("0000-01-01T00:00:00Z", "9999-12-31T00:00:00Z"),
        ("1999-12-31T23:59:59Z", "2026-12-01T00:00:00Z"),
        ("2026-11-01T00:00:00Z", "2100-01-01T00:00:01Z"),
    ] {
        let body = json!({"amount":"50.00","from":from,"to":to}).to_string();
        let (s, v) = t.admin("PUT", credit, body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{from} {to}: {v}");
        assert!(v["message"].as_str().unwrap().contains("2100"), "{v}");
    }
    // The bounds themselves are in.
    let body = json!({"amount":"50.00","from":"2000-01-01T00:00:00Z","to":"2100-01-01T00:00:00Z"});
    let (s, v) = t.admin("PUT", credit, body.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = pricebook_status(
        &t,
        &format!("effective_from = \"1970-01-01T00:00:00Z\"\n{BOOK}"),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
}
on_both!(dates_of_terms_and_price_books_lie_in_the_events_range);

/// Issue 24.6: one decimal grammar for every amount: the events' (`billing_core::decimal`,
/// the `quantity` pattern of schemas/gpu.usage.schema.json). Whatever it says of a text (it
/// takes `" 100"`, `"+100"` and `".5"`, refuses `"100."`, `"1e2"` and `"1_000"`), every
/// amount of every body and of the price book says the same.
async fn every_amount_reads_the_events_decimal_grammar(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    for (n, text) in [" 100", "+100", ".5", "100.", "1e2", "1_000", "0x10", "١٠٠"]
        .into_iter()
        .enumerate()
    {
        let grammar = billing_core::decimal::parse(text).is_ok();
        let mut verdicts = Vec::new();
        // An event's quantity.
        let mut e: Value = serde_json::from_str(&usage(
            &format!("q{n}"),
            "acme",
            &format!("g{n}"),
            "2026-11-03T10:00:00Z",
            "2026-11-03T10:01:00Z",
        ))
        .unwrap();
        e["data"]["quantity"] = json!(text);
        let v = t.ingest(&[e.to_string()]).await;
        verdicts.push(("event quantity", v["accepted"] == 1));
        // A top-up.
        let body = json!({"amount": text, "reference": format!("r{n}")}).to_string();
        let (s, _) = t
            .admin("POST", "/v1/admin/accounts/acme/topups", body)
            .await;
        verdicts.push(("top-up amount", s.is_success()));
        // A quota.
        let body = json!({ "prepaid_balance": text }).to_string();
        let (s, _) = t.admin("PUT", "/v1/admin/accounts/acme/quotas", body).await;
        verdicts.push(("quota", s.is_success()));
        // An authorization.
        let body = json!({"account":"acme","sku":"gpu.h100","quantity":text,"seconds":60});
        let (s, _) = t.admin("POST", "/v1/authorize", body.to_string()).await;
        verdicts.push(("authorization quantity", s.is_success()));
        // A term through the API.
        let body = json!({ "amount": text }).to_string();
        let uri = format!("/v1/admin/accounts/acme/terms/credits/c{n}");
        let (s, _) = t.admin("PUT", &uri, body).await;
        verdicts.push(("term amount", s.is_success()));
        // A price book rate.
        let book = BOOK.replace("\"36.00\"", &format!("{text:?}"));
        let (s, _) = pricebook_status(&t, &book).await;
        verdicts.push(("price book rate", s.is_success()));
        t.put_pricebook(BOOK).await;
        for (what, ok) in verdicts {
            assert_eq!(
                ok, grammar,
                "{what} of {text:?}: the grammar says {grammar}"
            );
        }
    }
}
on_both!(every_amount_reads_the_events_decimal_grammar);
