//! The persistent engine end to end, through the HTTP API, on SQLite and on PostgreSQL: the
//! same scenario runs against both.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::Value;

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

fn example_book() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/pricebook.toml"
    ))
    .unwrap()
}

fn example_events() -> Vec<String> {
    lines(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/events.jsonl"
        ))
        .unwrap(),
    )
}

/// Issued invoices of a close, keyed by account, in section 6 shape.
fn by_account(closed: &Value) -> Vec<(String, Value)> {
    closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["account"].as_str().unwrap().to_string(), section6(i)))
        .collect()
}

fn assert_equal_to_offline(closed: &Value, book: &str, events: &[String], period: &str) {
    let offline = offline_invoices(book, events, period);
    let issued = by_account(closed);
    assert_eq!(issued.len(), offline.len(), "accounts differ");
    for ((account, got), want) in issued.iter().zip(&offline) {
        assert_eq!(got, want, "invoice of {account} differs from gpubill rate");
    }
}

async fn worked_example_ingested_in_shuffled_batches_with_duplicates_equals_gpubill_rate(db: Db) {
    let t = TestApp::fresh(db).await;
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    let events = lines(&fixture("worked-1/events.jsonl"));
    let mut sent = events.clone();
    sent.extend(events.iter().take(4).cloned()); // redeliveries
    shuffle(&mut sent, 7);
    let (a, b) = sent.split_at(sent.len() / 2);
    let first = t.ingest(a).await;
    let second = t.ingest(b).await;
    let accepted = first["accepted"].as_u64().unwrap() + second["accepted"].as_u64().unwrap();
    let duplicates = first["duplicates"].as_u64().unwrap() + second["duplicates"].as_u64().unwrap();
    assert_eq!(
        (accepted, duplicates),
        (9, 5),
        "9 distinct events; a1 twice in the file plus 4 redeliveries"
    );
    let closed = t.close("2026-11").await;
    assert_equal_to_offline(&closed, &book, &events, "2026-11");
    // The normative expected totals, for good measure.
    let totals: Vec<(&str, &str)> = closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["account"].as_str().unwrap(), i["total"].as_str().unwrap()))
        .collect();
    assert_eq!(totals, [("acme", "806.85"), ("beta", "52.61")]);
    // Closing again returns the same invoices.
    assert_eq!(t.close("2026-11").await, closed);
}
on_both!(worked_example_ingested_in_shuffled_batches_with_duplicates_equals_gpubill_rate);

async fn a_simulated_fleet_day_equals_gpubill_rate(db: Db) {
    let t = TestApp::fresh(db).await;
    let book = example_book();
    t.put_pricebook(&book).await;
    let mut events = example_events();
    shuffle(&mut events, 11);
    for chunk in events.chunks(1000) {
        t.ingest(chunk).await;
    }
    let closed = t.close("2026-11").await;
    assert_equal_to_offline(&closed, &book, &events, "2026-11");
}
on_both!(a_simulated_fleet_day_equals_gpubill_rate);

async fn restart_mid_ingest_loses_nothing_and_doubles_nothing(db: Db) {
    let book = example_book();
    let events = example_events();
    let (first, rest) = events.split_at(events.len() / 2);
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book).await;
    for chunk in first.chunks(700) {
        t.ingest(chunk).await;
    }
    let url = t.shutdown().await;
    // A new app on the same database; the client retries the last batch it sent, then goes on.
    let t = TestApp::open(&url).await;
    let retried = t.ingest(&first[first.len() - 300..]).await;
    assert_eq!(
        retried["accepted"], 0,
        "a retried batch is all duplicates: {retried}"
    );
    for chunk in rest.chunks(700) {
        t.ingest(chunk).await;
    }
    let closed = t.close("2026-11").await;
    assert_equal_to_offline(&closed, &book, &events, "2026-11");
}
on_both!(restart_mid_ingest_loses_nothing_and_doubles_nothing);

async fn tenant_isolation_matrix(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&fixture("worked-1/pricebook.toml")).await;
    let acme = t.account("acme").await;
    let beta = t.account("beta").await;
    t.ingest(&lines(&fixture("worked-1/events.jsonl"))).await;
    let closed = t.close("2026-11").await;
    let id_of = |a: &str| {
        closed
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["account"] == a)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (acme_inv, beta_inv) = (id_of("acme"), id_of("beta"));

    // Own object: 200; another account's: 404 exactly like a nonexistent one.
    for (key, own, other) in [(&acme, &acme_inv, &beta_inv), (&beta, &beta_inv, &acme_inv)] {
        for suffix in ["", ".csv"] {
            let (s, _) = t
                .raw(
                    "GET",
                    &format!("/v1/invoices/{own}{suffix}"),
                    Some(key),
                    "application/json",
                    "",
                )
                .await;
            assert_eq!(s, StatusCode::OK);
            let (s_other, v_other) = t.get(&format!("/v1/invoices/{other}{suffix}"), key).await;
            let (s_none, v_none) = t
                .get(&format!("/v1/invoices/inv_doesnotexist{suffix}"), key)
                .await;
            assert_eq!(
                (s_other, s_none),
                (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND)
            );
            assert_eq!(v_other["error"], v_none["error"]);
            assert_eq!(
                v_other["message"]
                    .as_str()
                    .unwrap()
                    .replace(other.as_str(), "X"),
                v_none["message"]
                    .as_str()
                    .unwrap()
                    .replace("inv_doesnotexist", "X")
            );
        }
    }
    // Lists, usage and cost show only the caller's account.
    let (_, list) = t.get("/v1/invoices", &acme).await;
    assert_eq!(
        list.as_array()
            .unwrap()
            .iter()
            .map(|i| i["account"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["acme"]
    );
    let (s, usage) = t.get("/v1/usage?from=2026-11-01T00:00:00Z&to=2026-11-20T00:00:00Z&granularity=day&group_by=lease", &beta).await;
    assert_eq!(s, StatusCode::OK, "{usage}");
    assert_eq!(usage["account"], "beta");
    let leases: Vec<&str> = usage["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(leases, ["L3", "L4"], "beta's leases only");
    let (s, cost) = t.get("/v1/cost/current", &beta).await;
    assert_eq!(s, StatusCode::OK, "{cost}");
    assert_eq!(cost["invoice"]["account"], "beta");

    // Customer keys on admin routes: 403. Customer keys cannot ingest. No token: 401.
    for (method, uri) in [
        ("POST", "/v1/admin/accounts"),
        ("PUT", "/v1/admin/pricebook"),
        ("POST", "/v1/admin/invoices/close?period=2026-11"),
        (
            "GET",
            "/v1/admin/exports/invoices?period=2026-11&format=csv",
        ),
        ("GET", "/v1/admin/dead-letters"),
        ("GET", "/v1/admin/adjustments"),
        ("POST", "/v1/events"),
    ] {
        let (s, v) = t
            .call(method, uri, Some(&acme), "application/json", "{}")
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{method} {uri}: {v}");
        let (s, _) = t.call(method, uri, None, "application/json", "{}").await;
        assert_eq!(
            s,
            StatusCode::UNAUTHORIZED,
            "{method} {uri} without a token"
        );
    }
    let (s, _) = t.get("/v1/invoices", "gbk_not-a-key").await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // The admin is not a customer.
    let (s, _) = t.get("/v1/invoices", ADMIN).await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    // Keys are stored hashed, never in clear.
    let stored: Vec<String> = billing_store::db::query("select key_hash from api_keys")
        .fetch_all(t.state.store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(stored.len(), 2);
    assert!(!stored.contains(&acme) && !stored.contains(&beta));
    assert!(stored.contains(&billing_store::hash_key(&acme)));
}
on_both!(tenant_isolation_matrix);

async fn bad_input_gets_a_clear_4xx_and_rejected_events_are_dead_lettered(db: Db) {
    let t = TestApp::fresh(db).await;
    // Malformed JSON body.
    let (s, v) = t
        .call(
            "POST",
            "/v1/events",
            Some(INGEST),
            "application/cloudevents-batch+json",
            "[{\"id\":",
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        v["message"].as_str().unwrap().contains("not a JSON array"),
        "{v}"
    );
    // Unknown content type.
    let (s, v) = t
        .call("POST", "/v1/events", Some(INGEST), "text/plain", "hello")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        v["message"].as_str().unwrap().contains("content type"),
        "{v}"
    );
    // Oversized body.
    let big = format!("[\"{}\"]", "x".repeat(11 * 1024 * 1024));
    let (s, _) = t
        .raw("POST", "/v1/events", Some(INGEST), "application/json", big)
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    // Too many events.
    let many = format!("[{}]", vec!["{}"; 10_001].join(","));
    let (s, v) = t
        .call("POST", "/v1/events", Some(INGEST), "application/json", many)
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    // Invalid events: 200 with per-event reasons, and listed in dead letters.
    let good = &lines(&fixture("worked-1/events.jsonl"))[0];
    let bad_quantity = good.replace(
        "\"sku\":\"gpu.h100-80g\"",
        "\"sku\":\"gpu.h100-80g\",\"quantity\":\"-1\"",
    );
    let too_long = good
        .replace("2026-11-02T07:00:00+08:00", "2026-11-04T07:00:00+08:00")
        .replace("\"a1\"", "\"a9\"");
    let v = t
        .ingest(&[
            good.clone(),
            bad_quantity,
            too_long,
            "42".into(),
            "{\"specversion\":\"0.1\"}".into(),
        ])
        .await;
    let statuses: Vec<(&str, &str)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("accepted", ""),
            ("rejected", "bad_quantity"),
            ("rejected", "interval_too_long"),
            ("rejected", "malformed_json"),
            ("rejected", "bad_specversion")
        ]
    );
    let (s, dl) = t.get("/v1/admin/dead-letters", ADMIN).await;
    assert_eq!(s, StatusCode::OK);
    let reasons: Vec<&str> = dl["dead_letters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "bad_quantity",
            "interval_too_long",
            "malformed_json",
            "bad_specversion"
        ]
    );
    // A conflict: same identity, other content.
    let conflict = good.replace("07:00:00+08:00", "08:00:00+08:00");
    let v = t.ingest(&[conflict]).await;
    assert_eq!(v["results"][0]["reason"], "conflict");
    // Invalid price book: 422 naming the key and value.
    let (s, v) = t
        .call(
            "PUT",
            "/v1/admin/pricebook",
            Some(ADMIN),
            "application/toml",
            "currency = \"CNY\"\ntimezone = \"Mars/Base\"\n",
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("timezone = \"Mars/Base\""),
        "{v}"
    );
    // Bad account id, bad period, closing without a price book.
    let (s, _) = t
        .admin("POST", "/v1/admin/accounts", "{\"id\":\"no spaces\"}")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = t.admin("POST", "/v1/admin/accounts", "not json").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-13", "")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, v) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    // Unpriced usage blocks closing, naming it.
    t.put_pricebook("currency = \"CNY\"\n[skus.\"gpu.a100\"]\nrate_per_hour = \"10\"\n")
        .await;
    let (s, v) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert!(
        v["message"].as_str().unwrap().contains("gpu.h100-80g"),
        "{v}"
    );
    // Usage query errors.
    let key = t.account("acme").await;
    for q in [
        "",
        "?from=yesterday&to=2026-11-02T00:00:00Z",
        "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
        "?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&granularity=week",
    ] {
        let (s, _) = t.get(&format!("/v1/usage{q}"), &key).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{q}");
    }
}
on_both!(bad_input_gets_a_clear_4xx_and_rejected_events_are_dead_lettered);

async fn late_usage_never_changes_an_issued_invoice_and_is_listed_as_pending(db: Db) {
    let t = TestApp::fresh(db).await;
    let book = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&book).await;
    let events = lines(&fixture("worked-1/events.jsonl"));
    t.ingest(&events).await;
    let closed = t.close("2026-11").await;
    let late = events[0]
        .replace("\"a1\"", "\"late-1\"")
        .replace("L1", "L9");
    let v = t.ingest(std::slice::from_ref(&late)).await;
    assert_eq!(v["accepted"], 1);
    assert_eq!(
        t.close("2026-11").await,
        closed,
        "the issued invoices do not change"
    );
    let (s, adj) = t.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_eq!(s, StatusCode::OK);
    let a = &adj["pending_adjustments"][0];
    assert_eq!(a["account"], "acme");
    assert_eq!(a["events"][0]["id"], "late-1");
    // One more H100 05:00-07:00 on 11-02, all overflow: walked in time order, 05:00-06:00 now
    // fills tier 0 with 2 GPUs (7,200 x 24 x 0.7 / 3600 = 33.60) and 06:00-07:00 goes to tier 1
    // (7,200 x 20 / 3600 = 40.00): subtotal 720 + 33.60 + 40.00 + 0.11 + 0.27 = 793.98, tax
    // 47.64, total 841.62 against the issued 806.85.
    assert_eq!(a["recomputed_total"], "841.62");
    assert_eq!(a["difference"], "34.77");
    // Exports: CSV and JSON lines of the issued invoices.
    let (s, csv) = t
        .raw(
            "GET",
            "/v1/admin/exports/invoices?period=2026-11&format=csv",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",acme,") && l.contains(",total,") && l.ends_with(",806.85")),
        "{csv}"
    );
    let (s, jsonl) = t
        .raw(
            "GET",
            "/v1/admin/exports/invoices?period=2026-11&format=jsonl",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(String::from_utf8(jsonl).unwrap().lines().count(), 2);
}
on_both!(late_usage_never_changes_an_issued_invoice_and_is_listed_as_pending);

async fn credits_are_consumed_across_periods(db: Db) {
    let t = TestApp::fresh(db).await;
    let book = "currency = \"CNY\"\n[skus.\"gpu\"]\nrate_per_hour = \"10.00\"\n[[credits]]\naccount = \"acme\"\namount = \"15.00\"\n";
    t.put_pricebook(book).await;
    let ev = |id: &str, day: &str| {
        format!(
            r#"{{"specversion":"1.0","id":"{id}","source":"n","type":"gpu.usage","subject":"acme","data":{{"lease":"L","resource":"g","sku":"gpu","start":"{day}T00:00:00Z","end":"{day}T01:00:00Z"}}}}"#
        )
    };
    t.ingest(&[ev("oct", "2026-10-05"), ev("nov", "2026-11-05")])
        .await;
    let oct = t.close("2026-10").await;
    assert_eq!(oct[0]["credit"], "10.00");
    let nov = t.close("2026-11").await;
    assert_eq!(
        nov[0]["credit"], "5.00",
        "15.00 of credits less the 10.00 October used"
    );
    assert_eq!(nov[0]["total"], "5.00");
}
on_both!(credits_are_consumed_across_periods);

#[tokio::test]
async fn openapi_health_and_readiness() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let (s, doc) = t.call("GET", "/openapi.json", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    for path in [
        "/v1/events",
        "/v1/usage",
        "/v1/invoices/{id}",
        "/v1/admin/invoices/close",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} missing from the OpenAPI document"
        );
    }
    assert_eq!(
        t.raw("GET", "/healthz", None, "", "").await.0,
        StatusCode::OK
    );
    assert_eq!(
        t.raw("GET", "/readyz", None, "", "").await.0,
        StatusCode::OK
    );
}

async fn log_records_left_unfolded_are_folded_first_and_exactly_once(db: Db) {
    let t = TestApp::fresh(db).await;
    let events = lines(&fixture("worked-1/events.jsonl"));
    // Records appended to the log by another writer that crashed before folding them.
    for (i, e) in events[..3].iter().enumerate() {
        billing_store::db::query(
            "insert into log (seq, payload, received_at_ms) values ($1, $2, 0)",
        )
        .bind(i as i64 + 1)
        .bind(e.as_bytes().to_vec())
        .execute(t.state.store.pool())
        .await
        .unwrap();
    }
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 0);
    let v = t.ingest(&events[2..5]).await;
    // events[2] was in the unfolded log already: folded first, so now a duplicate.
    assert_eq!(v["results"][0]["status"], "duplicate", "{v}");
    // a1, a2, a3 from the log; a4 new; the fifth line of the file is a1 again.
    assert_eq!(t.state.store.log().event_count().await.unwrap(), 4);
    assert_eq!(t.state.store.log().next_offset().await.unwrap(), 7);
    assert_eq!(
        t.state.store.log().catch_up(DEC_2_2026_MS).await.unwrap(),
        0,
        "nothing left to fold"
    );
}
on_both!(log_records_left_unfolded_are_folded_first_and_exactly_once);

async fn price_book_versions_rate_periods_by_effective_from(db: Db) {
    let t = TestApp::fresh(db).await.at(JAN_2_2027_MS);
    let base = "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu\"]\n";
    t.put_pricebook(&format!("{base}rate_per_hour = \"10.00\"\n"))
        .await;
    // Uploaded later, effective from December: November keeps the first version.
    t.put_pricebook(&format!(
        "effective_from = \"2026-12-01T00:00:00Z\"\n{base}rate_per_hour = \"20.00\"\n"
    ))
    .await;
    let ev = |id: &str, day: &str| {
        format!(
            r#"{{"specversion":"1.0","id":"{id}","source":"n","type":"gpu.usage","subject":"acme","data":{{"lease":"L","resource":"g","sku":"gpu","start":"{day}T00:00:00Z","end":"{day}T01:00:00Z"}}}}"#
        )
    };
    t.ingest(&[ev("n", "2026-11-05"), ev("d", "2026-12-05")])
        .await;
    let nov = t.close("2026-11").await;
    assert_eq!(
        (
            nov[0]["subtotal"].as_str(),
            nov[0]["pricebook_version"].as_i64()
        ),
        (Some("10.00"), Some(1))
    );
    let dec = t.close("2026-12").await;
    assert_eq!(
        (
            dec[0]["subtotal"].as_str(),
            dec[0]["pricebook_version"].as_i64()
        ),
        (Some("20.00"), Some(2))
    );
    // A new upload never changes an issued invoice.
    t.put_pricebook(&format!("{base}rate_per_hour = \"99.00\"\n"))
        .await;
    assert_eq!(t.close("2026-11").await, nov);
}
on_both!(price_book_versions_rate_periods_by_effective_from);

#[tokio::test]
async fn usage_is_bucketed_from_the_ledger_and_paginated() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let key = t.account("acme").await;
    let ev = r#"{"specversion":"1.0","id":"u1","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L","resource":"g","sku":"gpu","start":"2026-11-05T00:30:00Z","end":"2026-11-05T02:00:00Z","quantity":"0.5"}}"#;
    t.ingest(&[ev.to_string()]).await;
    let (s, v) = t
        .get(
            "/v1/usage?from=2026-11-05T00:00:00Z&to=2026-11-05T03:00:00Z&granularity=hour",
            &key,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let got: Vec<&str> = v["groups"][0]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["unit_seconds"].as_str().unwrap())
        .collect();
    assert_eq!(
        got,
        ["900", "1800", "0"],
        "half a GPU: 30 min, 60 min, nothing"
    );
    assert!(v["next_from"].is_null());
    // 2h40 at second granularity: 9,600 buckets, served 1,000 at a time; a page shows the
    // groups with usage in it.
    let (_, v) = t
        .get(
            "/v1/usage?from=2026-11-05T00:20:00Z&to=2026-11-05T03:00:00Z&granularity=second",
            &key,
        )
        .await;
    let buckets = v["groups"][0]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1000);
    assert_eq!(
        (
            buckets[599]["unit_seconds"].as_str(),
            buckets[600]["unit_seconds"].as_str()
        ),
        (Some("0"), Some("0.5"))
    );
    assert_eq!(v["next_from"], "2026-11-05T00:36:40Z");
    let (_, empty) = t
        .get(
            "/v1/usage?from=2026-11-05T05:00:00Z&to=2026-11-05T06:00:00Z&granularity=minute",
            &key,
        )
        .await;
    assert_eq!(empty["groups"], serde_json::json!([]));
}

async fn two_writers_on_one_database_never_fold_onto_stale_ledger_rows(db: Db) {
    // Two servers on the same database take turns; each keeps a cache of the ledger rows it
    // wrote, which the other's batches make stale. Totals must still be exact.
    let url = fresh_db(db).await;
    let a = TestApp::open(&url).await;
    let b = TestApp::open(&url).await;
    let book = example_book();
    a.put_pricebook(&book).await;
    let mut events = example_events();
    shuffle(&mut events, 5);
    for (i, chunk) in events.chunks(400).enumerate() {
        if i % 3 == 2 {
            b.ingest(chunk).await
        } else {
            a.ingest(chunk).await
        };
    }
    let closed = a.close("2026-11").await;
    assert_equal_to_offline(&closed, &book, &events, "2026-11");
}
on_both!(two_writers_on_one_database_never_fold_onto_stale_ledger_rows);

#[tokio::test]
async fn metrics_count_events_and_dead_letters_by_reason() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let good = lines(&fixture("worked-1/events.jsonl"))[0].clone();
    let bad = good.replace("\"a1\"", "\"m1\"").replace(
        "\"sku\":\"gpu.h100-80g\"",
        "\"sku\":\"gpu.h100-80g\",\"quantity\":\"0\"",
    );
    t.ingest(&[good, bad]).await;
    let (s, body) = t.raw("GET", "/metrics", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains("gpubill_dead_letters_total{reason=\"bad_quantity\"}"),
        "{text}"
    );
    assert!(
        text.contains("gpubill_events_total{outcome=\"accepted\"}"),
        "{text}"
    );
    assert!(text.contains("gpubill_batch_duration_seconds"), "{text}");
}

/// Issue 29: which way each batch's identities went, on PostgreSQL. The first engine copies
/// the event's identity in; a second engine on the same database, which never saw it, meets
/// it in its own `COPY` and falls back to the look-up statement (the event a duplicate).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_identity_batches_by_path() {
    let url = fresh_db(Db::Postgres).await;
    let (a, b) = (TestApp::open(&url).await, TestApp::open(&url).await);
    let good = lines(&fixture("worked-1/events.jsonl"))[0].clone();
    a.ingest(std::slice::from_ref(&good)).await;
    let again = b.ingest(&[good]).await;
    assert_eq!(again["duplicates"], 1, "{again}");
    assert_eq!(b.state.store.identity_paths().fell_back, 1);
    let (s, body) = b.raw("GET", "/metrics", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    let text = String::from_utf8(body).unwrap();
    for path in ["copied", "fell_back"] {
        assert!(
            text.contains(&format!(
                "gpubill_identity_batches_total{{path=\"{path}\"}}"
            )),
            "{text}"
        );
    }
}

/// Usage answers are kept under the account's ledger token: the same query is answered
/// again unchanged, and a fold of the account by this server or by another one on the same
/// database (another engine) gives the next query the new figures at once.
async fn usage_answers_follow_every_fold_of_the_account(db: Db) {
    let url = fresh_db(db).await;
    let a = TestApp::open(&url).await;
    let b = TestApp::open(&url).await;
    let key = a.account("acme").await;
    let ev = |id: &str, resource: &str| {
        format!(
            r#"{{"specversion":"1.0","id":"{id}","source":"n","type":"gpu.usage","subject":"acme","data":{{"lease":"L","resource":"{resource}","sku":"gpu","start":"2026-11-05T00:30:00Z","end":"2026-11-05T02:00:00Z","quantity":"0.5"}}}}"#
        )
    };
    let uri = "/v1/usage?from=2026-11-05T00:00:00Z&to=2026-11-05T03:00:00Z&granularity=hour";
    let buckets = |v: &serde_json::Value| -> Vec<String> {
        v["groups"][0]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["unit_seconds"].as_str().unwrap().to_string())
            .collect()
    };
    a.ingest(&[ev("u1", "g1")]).await;
    let (s, first) = a.get(uri, &key).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    assert_eq!(buckets(&first), ["900", "1800", "0"]);
    assert_eq!(a.get(uri, &key).await.1, first, "asked again, unchanged");
    // This server folds the account: the next answer counts it.
    a.ingest(&[ev("u2", "g2")]).await;
    assert_eq!(buckets(&a.get(uri, &key).await.1), ["1800", "3600", "0"]);
    // Another server on the same database folds it: this server's next answer counts it.
    b.ingest(&[ev("u3", "g3")]).await;
    assert_eq!(buckets(&a.get(uri, &key).await.1), ["2700", "5400", "0"]);
    // A duplicate moves nothing, and another query of the same range is its own answer.
    b.ingest(&[ev("u3", "g3")]).await;
    assert_eq!(buckets(&a.get(uri, &key).await.1), ["2700", "5400", "0"]);
    let (_, by_resource) = a.get(&format!("{uri}&group_by=resource"), &key).await;
    assert_eq!(by_resource["groups"].as_array().unwrap().len(), 3);
}
on_both!(usage_answers_follow_every_fold_of_the_account);

/// Section 7's preview recomputes a closed period as its close rated it: with the price book
/// version the invoice was issued with (not a later upload) and the credit balance the account
/// had at the close (not the credit the invoice drew). Issue 12's worked example: credits
/// 500, an issued subtotal of 100 at 6% tax (credit 100, total 0.00), 50 more arriving late:
/// the recomputed invoice draws 150 of the 500 and still totals 0.00 (the old preview, taking
/// the issued credit of 100 as the balance, said 53.00).
async fn adjustments_recompute_with_the_issued_version_and_the_credit_balance(db: Db) {
    let t = TestApp::fresh(db).await;
    let book = |rate: &str| {
        format!(
            "currency = \"USD\"\ntimezone = \"UTC\"\n[skus.\"gpu\"]\nrate_per_hour = \"{rate}\"\n[tax]\nrate = \"0.06\"\n[[credits]]\naccount = \"acme\"\namount = \"500.00\"\n"
        )
    };
    t.put_pricebook(&book("100.00")).await;
    let ev = |id: &str, subject: &str, start: &str, end: &str| {
        format!(
            r#"{{"specversion":"1.0","id":"{id}","source":"n","type":"gpu.usage","subject":"{subject}","data":{{"lease":"L-{id}","resource":"g","sku":"gpu","start":"{start}","end":"{end}"}}}}"#
        )
    };
    t.ingest(&[
        ev("a1", "acme", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z"),
        ev("b1", "beta", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z"),
    ])
    .await;
    let closed = t.close("2026-11").await;
    let total_of = |who: &str| {
        closed
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["account"] == who)
            .map(|i| (i["credit"].clone(), i["total"].clone()))
            .unwrap()
    };
    assert_eq!(
        total_of("acme"),
        (serde_json::json!("100.00"), serde_json::json!("0.00"))
    );
    assert_eq!(
        total_of("beta"),
        (serde_json::json!("0.00"), serde_json::json!("106.00"))
    );
    // Late: half an hour more for acme (50.00), an hour more for beta (100.00); then a new
    // price book version at twice the rate, applicable to November too.
    t.ingest(&[
        ev("a2", "acme", "2026-11-04T00:00:00Z", "2026-11-04T00:30:00Z"),
        ev("b2", "beta", "2026-11-04T00:00:00Z", "2026-11-04T01:00:00Z"),
    ])
    .await;
    t.put_pricebook(&book("200.00")).await;
    let (s, adj) = t.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_eq!(s, StatusCode::OK, "{adj}");
    let of = |who: &str| {
        adj["pending_adjustments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["account"] == who)
            .map(|a| (a["recomputed_total"].clone(), a["difference"].clone()))
            .unwrap_or_else(|| panic!("no adjustment for {who}: {adj}"))
    };
    assert_eq!(
        of("acme"),
        (serde_json::json!("0.00"), serde_json::json!("0.00"))
    );
    // beta at the issued version's 100.00/h: 2 h x 100 x 1.06 = 212.00 (not 424.00 at 200.00).
    assert_eq!(
        of("beta"),
        (serde_json::json!("212.00"), serde_json::json!("106.00"))
    );
}
on_both!(adjustments_recompute_with_the_issued_version_and_the_credit_balance);
