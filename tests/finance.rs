//! Issue 12, finance: adjustments on the next invoice and credit notes (billing-semantics.md
//! section 7), the prepaid wallet, invoice status and payments, on both backends.

use axum::http::StatusCode;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::sync::Arc;

/// 2027-02-02T00:00:00Z: January 2027 has ended.
const FEB_2_2027_MS: i64 = JAN_2_2027_MS + 31 * 86_400_000;

const BOOK: &str = r#"currency = "CNY"
timezone = "UTC"

[skus."gpu"]
rate_per_hour = "10.00"
state_rates = { stopped = "0" }

[tax]
rate = "0.06"
"#;

fn usage(id: &str, account: &str, lease: &str, start: &str, end: &str) -> String {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
           "data":{"lease":lease,"resource":"g0","sku":"gpu","start":start,"end":end}})
    .to_string()
}

fn state(id: &str, account: &str, lease: &str, state: &str, at: &str) -> String {
    json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.state","subject":account,
           "data":{"lease":lease,"state":state,"at":at}})
    .to_string()
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn d(v: &Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("not a decimal string: {v}"))
        .parse()
        .unwrap()
}

/// What an issued invoice says for good: everything but its status and payments (which move).
fn fixed(v: &Value) -> Value {
    let mut v = v.clone();
    let o = v.as_object_mut().unwrap();
    o.remove("status");
    o.remove("paid");
    v
}

async fn late_usage_is_adjusted_on_the_next_invoice_with_the_originals_number(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    // November: 10 GPU-hours, 100.00 + 6% = 106.00.
    t.ingest(&[usage(
        "n1",
        "acme",
        "L1",
        "2026-11-10T00:00:00Z",
        "2026-11-10T10:00:00Z",
    )])
    .await;
    let nov = t.close("2026-11").await;
    assert_eq!(nov.as_array().unwrap().len(), 1, "{nov}");
    let original = nov[0].clone();
    assert_eq!(original["number"], "INV-2026-000001");
    assert_eq!(original["total"], "106.00");
    assert_eq!(original["amount_due"], "106.00");
    let id = original["id"].as_str().unwrap().to_string();
    let (_, before) = t.get(&format!("/v1/invoices/{id}"), &key).await;

    // Late: 5 more hours in November; December: 1 hour (posted once the clock is past it).
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[
        usage(
            "late-1",
            "acme",
            "L2",
            "2026-11-20T00:00:00Z",
            "2026-11-20T05:00:00Z",
        ),
        usage(
            "d1",
            "acme",
            "L3",
            "2026-12-05T00:00:00Z",
            "2026-12-05T01:00:00Z",
        ),
    ])
    .await;
    let (s, pending) = t.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_eq!(s, StatusCode::OK, "{pending}");
    let p = &pending["pending_adjustments"][0];
    assert_eq!(p["original_number"], "INV-2026-000001");
    assert_eq!(p["recomputed_total"], "159.00");
    assert_eq!(p["difference"], "53.00");

    // The December close (issued 2027-01-02: the 2027 series) carries the adjustment.
    let dec = t.close("2026-12").await;
    let inv = &dec[0];
    assert_eq!(inv["number"], "INV-2027-000001");
    assert_eq!(inv["total"], "10.60");
    assert_eq!(
        inv["adjustments"],
        json!([
            {"period":"2026-11","invoice_id":id,"invoice_number":"INV-2026-000001",
             "component":"on_demand","amount":"50.00"},
            {"period":"2026-11","invoice_id":id,"invoice_number":"INV-2026-000001",
             "component":"tax","amount":"3.00"}
        ])
    );
    // 10.60 + 50.00 + 3.00.
    assert_eq!(inv["amount_due"], "63.60");
    assert!(inv.get("credit_note").is_none(), "{inv}");
    // The original never changes (its status moves: unpaid 31 days after issue, overdue).
    let (_, after) = t.get(&format!("/v1/invoices/{id}"), &key).await;
    assert_eq!(fixed(&before), fixed(&after));
    assert_eq!(after["status"], "overdue");
    // Nothing is pending any more, and the next close adjusts nothing again.
    let (_, pending) = t.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_eq!(
        pending["pending_adjustments"][0]["lines"],
        json!([]),
        "{pending}"
    );
    let t = t.at(FEB_2_2027_MS);
    let jan = t.close("2027-01").await;
    assert_eq!(jan[0]["number"], "INV-2027-000002");
    assert!(jan[0].get("adjustments").is_none(), "{jan}");
    assert_eq!(jan[0]["amount_due"], "0.00");
    assert_eq!(jan[0]["status"], "paid", "an invoice owing nothing is paid");
    // Exports carry the adjustment lines with the original's number.
    let (s, csv) = t
        .raw(
            "GET",
            "/v1/admin/exports/invoices?period=2026-12&format=csv",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",adjustment:on_demand,") && l.ends_with(",INV-2026-000001,50.00")),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.contains(",amount_due,") && l.ends_with(",63.60")),
        "{csv}"
    );
}
on_both!(late_usage_is_adjusted_on_the_next_invoice_with_the_originals_number);

async fn a_late_stop_that_lowers_an_issued_invoice_yields_a_credit_note(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    // November: 240 GPU-hours = 2,400.00 + 144.00 tax = 2,544.00.
    let days: Vec<String> = (1..=10)
        .map(|day| {
            usage(
                &format!("n{day}"),
                "acme",
                "L1",
                &format!("2026-11-{day:02}T00:00:00Z"),
                &format!("2026-11-{:02}T00:00:00Z", day + 1),
            )
        })
        .collect();
    assert_eq!(t.ingest(&days).await["accepted"], 10);
    let nov = t.close("2026-11").await;
    assert_eq!(nov[0]["total"], "2544.00");
    let nov_id = nov[0]["id"].as_str().unwrap().to_string();
    let (_, before) = t.get(&format!("/v1/invoices/{nov_id}"), &key).await;
    // December: 1 hour on another lease (10.60). Late: L1 was stopped all along (rate 0).
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[
        usage(
            "d1",
            "acme",
            "L3",
            "2026-12-05T00:00:00Z",
            "2026-12-05T01:00:00Z",
        ),
        state("s1", "acme", "L1", "stopped", "2026-11-01T00:00:00Z"),
    ])
    .await;
    let dec = t.close("2026-12").await;
    let inv = &dec[0];
    assert_eq!(inv["total"], "10.60");
    // -2,400.00 on_demand, -144.00 tax; the state:stopped line is 0.00 and makes no line.
    let lines: Vec<(String, String)> = inv["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["component"].as_str().unwrap().to_string(),
                a["amount"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("on_demand".to_string(), "-2400.00".to_string()),
            ("tax".to_string(), "-144.00".to_string())
        ]
    );
    assert_eq!(inv["amount_due"], "0.00");
    assert_eq!(inv["status"], "paid");
    // 2,544.00 - 10.60 = 2,533.40 left: a credit note of its own series, referencing November.
    let cn_id = inv["credit_note"].as_str().unwrap().to_string();
    let (s, cn) = t.get(&format!("/v1/invoices/{cn_id}"), &key).await;
    assert_eq!(s, StatusCode::OK, "{cn}");
    assert_eq!(cn["kind"], "credit_note");
    assert_eq!(cn["number"], "CN-2027-000001");
    assert_eq!(cn["amount"], "2533.40");
    assert_eq!(cn["invoice_id"], inv["id"]);
    assert_eq!(
        cn["references"],
        json!([{"period":"2026-11","invoice_id":nov_id,"invoice_number":"INV-2026-000001","amount":"-2544.00"}])
    );
    // Listed with the invoices, credited to the wallet; the original is unchanged.
    let (_, docs) = t.get("/v1/invoices", &key).await;
    let kinds: Vec<&str> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["invoice", "invoice", "credit_note"], "{docs}");
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(balance["wallet"]["balance"], "2533.40", "{balance}");
    assert_eq!(balance["wallet"]["movements"][0]["kind"], "credit_note");
    let (_, after) = t.get(&format!("/v1/invoices/{nov_id}"), &key).await;
    assert_eq!(fixed(&before), fixed(&after));
    // Another account's key cannot read it.
    let other = t.account("beta").await;
    let (s, _) = t.get(&format!("/v1/invoices/{cn_id}"), &other).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // The next invoice is settled from that wallet: January's 5 hours, 53.00.
    let t = t.at(FEB_2_2027_MS);
    t.ingest(&[usage(
        "j1",
        "acme",
        "L4",
        "2027-01-05T00:00:00Z",
        "2027-01-05T05:00:00Z",
    )])
    .await;
    let jan = t.close("2027-01").await;
    let acme = jan
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "acme")
        .unwrap();
    assert_eq!(
        (&acme["amount_due"], &acme["paid"], &acme["status"]),
        (&json!("53.00"), &json!("53.00"), &json!("paid"))
    );
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(balance["wallet"]["balance"], "2480.40", "{balance}");
}
on_both!(a_late_stop_that_lowers_an_issued_invoice_yields_a_credit_note);

async fn topup(t: &TestApp, account: &str, amount: &str, reference: &str) -> (StatusCode, Value) {
    t.admin(
        "POST",
        &format!("/v1/admin/accounts/{account}/topups"),
        json!({"amount":amount,"reference":reference}).to_string(),
    )
    .await
}

async fn a_hundred_concurrent_topups_with_twenty_repeated_references_credit_eighty(db: Db) {
    let t = Arc::new(TestApp::fresh(db).await);
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let t = t.clone();
            // 80 distinct references; calls 80..99 repeat references 0..19.
            let reference = format!("bank-{}", i % 80);
            tokio::spawn(async move { topup(&t, "acme", "10.00", &reference).await })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        let (s, v) = task.await.unwrap();
        match s {
            StatusCode::CREATED => created += 1,
            StatusCode::OK => assert_eq!(v["created"], false, "{v}"),
            other => panic!("{other}: {v}"),
        }
    }
    assert_eq!(created, 80);
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(balance["wallet"]["balance"], "800.00");
    let movements = balance["wallet"]["movements"].as_array().unwrap();
    assert_eq!(movements.len(), 80);
    assert_eq!(
        movements.iter().map(|m| d(&m["amount"])).sum::<Decimal>(),
        d(&balance["wallet"]["balance"])
    );
}
on_both!(a_hundred_concurrent_topups_with_twenty_repeated_references_credit_eighty);

async fn pay(t: &TestApp, id: &str, body: Value) -> (StatusCode, Value) {
    t.admin(
        "POST",
        &format!("/v1/admin/invoices/{id}/payments"),
        body.to_string(),
    )
    .await
}

async fn wallet_settlement_payments_status_and_bad_input(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let acme = t.account("acme").await;
    t.account("beta").await;
    // Bad input: clear 4xx, nothing stored.
    for (body, status) in [
        (
            json!({"amount":"-5.00","reference":"r"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":"0","reference":"r"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":"1.001","reference":"r"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":"1e3","reference":"r"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":1.5,"reference":"r"}),
            StatusCode::BAD_REQUEST,
        ),
        (json!({"amount":"5.00"}), StatusCode::BAD_REQUEST),
        (
            json!({"amount":"5.00","reference":""}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":"5.00","reference":"settlement:x"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"amount":"5.00","reference":"r","extra":1}),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (s, v) = t
            .admin("POST", "/v1/admin/accounts/acme/topups", body.to_string())
            .await;
        assert_eq!(s, status, "{body}: {v}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    }
    let (s, _) = topup(&t, "nobody", "5.00", "r").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, balance) = t.get("/v1/balance", &acme).await;
    assert_eq!(balance["wallet"]["movements"], json!([]), "{balance}");
    // Top-up, the same reference with another amount, a refund over the balance.
    assert_eq!(
        topup(&t, "acme", "500.00", "wire-1").await.0,
        StatusCode::CREATED
    );
    let (s, v) = topup(&t, "acme", "501.00", "wire-1").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let refund = |amount: &str, reference: &str| {
        t.admin(
            "POST",
            "/v1/admin/accounts/acme/refunds",
            json!({"amount":amount,"reference":reference}).to_string(),
        )
    };
    let (s, v) = refund("600.00", "ref-1").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = refund("100.00", "ref-1").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["balance"], "400.00");
    // November: acme 10 h (106.00) settled from the wallet; beta 2 h (21.20) unpaid.
    t.ingest(&[
        usage(
            "a1",
            "acme",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T10:00:00Z",
        ),
        usage(
            "b1",
            "beta",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T02:00:00Z",
        ),
    ])
    .await;
    let nov = t.close("2026-11").await;
    let (a, b) = (&nov[0], &nov[1]);
    assert_eq!(
        (&a["account"], &a["status"], &a["paid"]),
        (&json!("acme"), &json!("paid"), &json!("106.00"))
    );
    assert_eq!(
        (&b["account"], &b["status"], &b["paid"]),
        (&json!("beta"), &json!("issued"), &json!("0.00"))
    );
    let (_, balance) = t.get("/v1/balance", &acme).await;
    let w = &balance["wallet"];
    assert_eq!(w["balance"], "294.00", "{w}");
    let kinds: Vec<&str> = w["movements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["topup", "refund", "settlement"]);
    assert_eq!(
        w["movements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| d(&m["amount"]))
            .sum::<Decimal>(),
        d(&w["balance"])
    );
    // Payments: unknown invoice, paying a paid one, over-paying, then paying beta in two.
    let (s, _) = pay(&t, "inv_nope", json!({"reference":"p"})).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, v) = pay(&t, a["id"].as_str().unwrap(), json!({"reference":"p"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let beta_id = b["id"].as_str().unwrap();
    let (s, v) = pay(&t, beta_id, json!({"amount":"30.00","reference":"p1"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "over-paying: {v}");
    let (s, v) = pay(&t, beta_id, json!({"amount":"20.00","reference":"p1"})).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["invoice"]["status"], "issued");
    // Overdue 30 days after issue while unpaid.
    let t = t.at(DEC_2_2026_MS + 30 * 86_400_000);
    let (s, v) = t
        .raw(
            "GET",
            "/v1/admin/exports/invoices?period=2026-11&format=jsonl",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let rows: Vec<Value> = String::from_utf8(v)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[1]["status"], "overdue", "{rows:?}");
    // The same payment again is answered with the stored one; the rest pays it.
    let (s, v) = pay(&t, beta_id, json!({"amount":"20.00","reference":"p1"})).await;
    assert_eq!((s, &v["created"]), (StatusCode::OK, &json!(false)), "{v}");
    let (s, v) = pay(&t, beta_id, json!({"reference":"p2"})).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["payment"]["amount"], "1.20");
    assert_eq!(
        (&v["invoice"]["status"], &v["invoice"]["paid"]),
        (&json!("paid"), &json!("21.20"))
    );
    let (s, v) = pay(&t, beta_id, json!({"reference":"p3"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "paying twice: {v}");
}
on_both!(wallet_settlement_payments_status_and_bad_input);

/// Property: whatever sequence of top-ups, refunds (some refused) and repeats, the balance
/// is the sum of the movements and never negative.
async fn the_balance_always_equals_the_sum_of_the_movements(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut expected = Decimal::ZERO;
    for step in 0..60 {
        let amount = format!("{}.{:02}", next(300), next(100));
        let reference = format!("r{}", next(40));
        let refund = next(3) == 0;
        let path = if refund { "refunds" } else { "topups" };
        let (s, v) = t
            .admin(
                "POST",
                &format!("/v1/admin/accounts/acme/{path}"),
                json!({"amount":amount,"reference":reference}).to_string(),
            )
            .await;
        let a: Decimal = amount.parse().unwrap();
        if s == StatusCode::CREATED {
            expected += if refund { -a } else { a };
        } else {
            assert!(
                matches!(
                    s,
                    StatusCode::OK | StatusCode::CONFLICT | StatusCode::BAD_REQUEST
                ),
                "step {step}: {s} {v}"
            );
        }
        let (_, balance) = t.get("/v1/balance", &key).await;
        let w = &balance["wallet"];
        let sum: Decimal = w["movements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| d(&m["amount"]))
            .sum();
        assert_eq!(sum, d(&w["balance"]), "step {step}: {w}");
        assert_eq!(sum, expected, "step {step}");
        assert!(sum >= Decimal::ZERO, "step {step}: {w}");
    }
}
on_both!(the_balance_always_equals_the_sum_of_the_movements);

async fn the_prepaid_quota_and_authorization_use_the_wallet(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    // Setting the quota is a correction movement to 100.00, not an overwrite.
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            r#"{"prepaid_balance":"100.00"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let authorize = |seconds: i64| {
        t.call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            json!({"account":"acme","sku":"gpu","quantity":"1","seconds":seconds}).to_string(),
        )
    };
    // 11 hours at 10.00 = 110.00 > 100.00.
    let (s, v) = authorize(11 * 3600).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["decision"], "denied", "{v}");
    assert_eq!(v["quota"], "prepaid_balance", "{v}");
    assert_eq!(
        topup(&t, "acme", "50.00", "wire-1").await.0,
        StatusCode::CREATED
    );
    let (_, v) = authorize(11 * 3600).await;
    assert_eq!(v["decision"], "allowed", "{v}");
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(balance["prepaid_balance"], "150.00", "{balance}");
    assert_eq!(
        balance["available"], "40.00",
        "150.00 less the 110.00 hold: {balance}"
    );
    let kinds: Vec<&str> = balance["wallet"]["movements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["correction", "topup"]);
}
on_both!(the_prepaid_quota_and_authorization_use_the_wallet);

async fn as_known_at_answers_with_the_events_ingested_by_then(db: Db) {
    const DAY: i64 = 86_400_000;
    let t = TestApp::fresh(db).await.at(DEC_2_2026_MS + 8 * DAY);
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    // Ingested on 12-10: 1 hour on 12-05. On 12-12: 2 more hours on 12-06.
    t.ingest(&[usage(
        "d1",
        "acme",
        "L1",
        "2026-12-05T00:00:00Z",
        "2026-12-05T01:00:00Z",
    )])
    .await;
    let t = t.at(DEC_2_2026_MS + 10 * DAY);
    t.ingest(&[usage(
        "d2",
        "acme",
        "L1",
        "2026-12-06T00:00:00Z",
        "2026-12-06T02:00:00Z",
    )])
    .await;
    let (s, now) = t.get("/v1/cost/current", &key).await;
    assert_eq!(s, StatusCode::OK, "{now}");
    assert_eq!(now["invoice"]["total"], "31.80");
    let then = "2026-12-11T00:00:00Z";
    let (s, was) = t
        .get(&format!("/v1/cost/current?as_known_at={then}"), &key)
        .await;
    assert_eq!(s, StatusCode::OK, "{was}");
    assert_eq!(was["invoice"]["total"], "10.60", "{was}");
    assert_eq!(was["as_known_at"], then);
    let usage = |known: &str| {
        format!(
            "/v1/usage?from=2026-12-01T00:00:00Z&to=2027-01-01T00:00:00Z&granularity=day{known}"
        )
    };
    let total = |v: &Value| -> Decimal {
        v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["buckets"].as_array().unwrap().iter())
            .map(|b| d(&b["unit_seconds"]))
            .sum()
    };
    let (_, now) = t.get(&usage(""), &key).await;
    assert_eq!(total(&now), Decimal::from(10_800));
    let (s, was) = t.get(&usage(&format!("&as_known_at={then}")), &key).await;
    assert_eq!(s, StatusCode::OK, "{was}");
    assert_eq!(total(&was), Decimal::from(3600), "{was}");
    // Before anything was ingested: nothing; the future is refused.
    let (_, before) = t
        .get("/v1/cost/current?as_known_at=2026-12-09T00:00:00Z", &key)
        .await;
    assert_eq!(before["invoice"]["total"], "0.00");
    for bad in ["2027-06-01T00:00:00Z", "yesterday"] {
        let (s, v) = t
            .get(&format!("/v1/cost/current?as_known_at={bad}"), &key)
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {v}");
        let (s, _) = t.get(&usage(&format!("&as_known_at={bad}")), &key).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}");
    }
}
on_both!(as_known_at_answers_with_the_events_ingested_by_then);

async fn journal(t: &TestApp, period: &str) -> Vec<Value> {
    let (s, body) = t
        .raw(
            "GET",
            &format!("/v1/admin/exports/journal?period={period}&format=jsonl"),
            Some(ADMIN),
            "",
            "",
        )
        .await;
    let body = String::from_utf8(body).unwrap();
    assert_eq!(s, StatusCode::OK, "{body}");
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every document's debits equal its credits; answers the net (debit - credit) per ledger
/// account over the documents `pick` selects.
fn check_balanced(entries: &[Value]) {
    let mut per_doc: std::collections::BTreeMap<String, Decimal> = Default::default();
    for e in entries {
        let (dr, cr) = (d(&e["debit"]), d(&e["credit"]));
        assert!(dr.is_zero() || cr.is_zero(), "two-sided: {e}");
        *per_doc
            .entry(e["document"].as_str().unwrap().to_string())
            .or_default() += dr - cr;
    }
    for (doc, net) in per_doc {
        assert!(net.is_zero(), "{doc} is off by {net}: {entries:#?}");
    }
}

fn net(entries: &[Value], account: &str, doc_prefix: &str) -> Decimal {
    entries
        .iter()
        .filter(|e| {
            e["account"] == account && e["document"].as_str().unwrap().starts_with(doc_prefix)
        })
        .map(|e| d(&e["debit"]) - d(&e["credit"]))
        .sum()
}

async fn the_journal_balances_every_document_and_ties_out_to_the_invoices(db: Db) {
    let book = format!(
        "{BOOK}\n[[packages]]\naccount = \"acme\"\nid = \"pk-1\"\nsku = \"gpu\"\nhours = \"100\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2027-01-01T00:00:00Z\"\nprice = \"500.00\"\n"
    );
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book).await;
    t.account("acme").await;
    t.account("beta").await;
    assert_eq!(
        topup(&t, "acme", "1000.00", "wire-1").await.0,
        StatusCode::CREATED
    );
    t.ingest(&[
        usage(
            "a1",
            "acme",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T10:00:00Z",
        ),
        usage(
            "b1",
            "beta",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T02:00:00Z",
        ),
    ])
    .await;
    // An open period has no journal yet.
    let (s, _) = t
        .get("/v1/admin/exports/journal?period=2026-11", ADMIN)
        .await;
    assert_eq!(s, StatusCode::CONFLICT);
    let nov = t.close("2026-11").await;
    // acme: the package's price, 500.00 + 30.00 tax, settled from the wallet.
    assert_eq!(nov[0]["total"], "530.00");
    assert_eq!(nov[0]["status"], "paid");
    let e = journal(&t, "2026-11").await;
    check_balanced(&e);
    let invoiced: Decimal = nov.as_array().unwrap().iter().map(|i| d(&i["total"])).sum();
    assert_eq!(net(&e, "accounts_receivable", "inv_"), invoiced);
    assert_eq!(
        net(&e, "tax_payable", "inv_"),
        -(d(&nov[0]["tax"]) + d(&nov[1]["tax"]))
    );
    // 10 of the package's 100 hours used: 50.00 of its 500.00 recognized.
    assert_eq!(net(&e, "deferred_revenue", ""), dec("-450.00"));
    assert_eq!(net(&e, "revenue:package", ""), dec("-50.00"));
    // The wallet paid acme's invoice; beta's is still receivable.
    assert_eq!(net(&e, "accounts_receivable", ""), dec("21.20"));
    assert_eq!(net(&e, "wallet_liability", "payment:"), dec("530.00"));

    // December: beta's lease was stopped all along (late): a credit note; the top-up of
    // 12-02 is in December's journal.
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[state("s1", "beta", "L1", "stopped", "2026-11-01T00:00:00Z")])
        .await;
    let closed = t.close("2026-12").await;
    let beta = closed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "beta")
        .unwrap();
    assert!(beta["credit_note"].is_string(), "{beta}");
    let e = journal(&t, "2026-12").await;
    check_balanced(&e);
    let with_adjustments: Decimal = closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            d(&i["total"])
                + i["adjustments"]
                    .as_array()
                    .map(|a| a.iter().map(|l| d(&l["amount"])).sum::<Decimal>())
                    .unwrap_or_default()
        })
        .sum();
    assert_eq!(net(&e, "accounts_receivable", "inv_"), with_adjustments);
    assert_eq!(net(&e, "accounts_receivable", "cn_"), dec("21.20"));
    assert_eq!(net(&e, "wallet_liability", "cn_"), dec("-21.20"));
    assert_eq!(net(&e, "cash", "movement:"), dec("1000.00"));
    // CSV has the same lines.
    let (s, csv) = t
        .raw(
            "GET",
            "/v1/admin/exports/journal?period=2026-12&format=csv",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(String::from_utf8(csv).unwrap().lines().count(), e.len() + 1);
    let (s, _) = t
        .get("/v1/admin/exports/journal?period=2026-12&format=xml", ADMIN)
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}
on_both!(the_journal_balances_every_document_and_ties_out_to_the_invoices);

/// "Late" follows what the rules read (issue 12): usage in an open period changes a closed
/// period's minimum charge, which counts a resource's seconds over all its events.
async fn usage_in_an_open_period_adjusts_a_closed_minimum_charge(db: Db) {
    let book = BOOK.replace(
        "rate_per_hour = \"10.00\"\n",
        "rate_per_hour = \"10.00\"\nminimum_seconds = 3600\n",
    );
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book).await;
    t.account("acme").await;
    // 30 minutes on the last evening of November: 5.00 of usage plus a 30-minute minimum
    // (5.00): 10.00 + 0.60 tax.
    t.ingest(&[usage(
        "n1",
        "acme",
        "L1",
        "2026-11-30T23:00:00Z",
        "2026-11-30T23:30:00Z",
    )])
    .await;
    let nov = t.close("2026-11").await;
    assert_eq!(nov[0]["total"], "10.60", "{nov}");
    // The same resource runs on into December: its seconds over all its events reach the
    // minimum, so November owes none after all (-5.00 and -0.30 tax on December's invoice).
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[usage(
        "d1",
        "acme",
        "L1",
        "2026-12-01T00:00:00Z",
        "2026-12-01T01:00:00Z",
    )])
    .await;
    let dec = t.close("2026-12").await;
    assert_eq!(dec[0]["total"], "10.60");
    assert_eq!(
        dec[0]["adjustments"],
        json!([
            {"period":"2026-11","invoice_id":nov[0]["id"],"invoice_number":"INV-2026-000001",
             "component":"minimum","amount":"-5.00"},
            {"period":"2026-11","invoice_id":nov[0]["id"],"invoice_number":"INV-2026-000001",
             "component":"tax","amount":"-0.30"}
        ])
    );
    assert_eq!(dec[0]["amount_due"], "5.30");
}
on_both!(usage_in_an_open_period_adjusts_a_closed_minimum_charge);

/// `gpubill verify`'s check (issue 14) over adjustments, a credit note, payments and
/// as-known-at ledgers: clean, then each corruption found.
async fn verify_recomputes_invoices_and_adjustments_and_finds_corruption(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    t.account("beta").await;
    assert_eq!(
        topup(&t, "acme", "50.00", "wire-1").await.0,
        StatusCode::CREATED
    );
    t.ingest(&[
        usage(
            "a1",
            "acme",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T10:00:00Z",
        ),
        usage(
            "b1",
            "beta",
            "L1",
            "2026-11-10T00:00:00Z",
            "2026-11-10T02:00:00Z",
        ),
    ])
    .await;
    t.close("2026-11").await;
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[
        usage(
            "a2",
            "acme",
            "L2",
            "2026-11-20T00:00:00Z",
            "2026-11-20T05:00:00Z",
        ),
        state("s1", "beta", "L1", "stopped", "2026-11-01T00:00:00Z"),
        usage(
            "a3",
            "acme",
            "L3",
            "2026-12-05T00:00:00Z",
            "2026-12-05T01:00:00Z",
        ),
    ])
    .await;
    let dec = t.close("2026-12").await;
    assert!(
        dec[0]["adjustments"].is_array() && dec[1]["credit_note"].is_string(),
        "{dec}"
    );
    let store = &t.state.store;
    let report = store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    assert_eq!((report.invoices, report.adjustments), (4, 2), "{report:?}");
    assert!(report.usage_keys >= 4, "{report:?}");
    // Corrupt an adjustment's recomputation and an invoice's amount due.
    for sql in [
        "update adjustments set body = replace(body, '\"total\":\"', '\"total\":\"7') where account = 'acme'",
        "update invoices set amount_due = '0.01' where account = 'acme' and period = '2026-12'",
    ] {
        let done = billing_store::db::query(sql)
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(done.rows_affected(), 1, "{sql}");
    }
    let report = store.finance().verify(Some("2026-11")).await.unwrap();
    let kinds: Vec<&str> = report.differences.iter().map(|d| d.kind.as_str()).collect();
    assert!(kinds.contains(&"adjustment"), "{:#?}", report.differences);
    assert!(kinds.contains(&"amount_due"), "{:#?}", report.differences);
}
on_both!(verify_recomputes_invoices_and_adjustments_and_finds_corruption);

/// Found by the simulation (issue 14): `verify` counted as known to a close the events
/// ingested in the same millisecond after it (and, with concurrent writers, those whose fold
/// read its clock before the close but committed after it), and reported a difference that
/// was none. Facts and closes are now ordered by their folds' stamps, not by clocks.
async fn verify_orders_facts_and_closes_by_fold_not_by_clock(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    t.ingest(&[usage(
        "a1",
        "acme",
        "L1",
        "2026-11-10T00:00:00Z",
        "2026-11-10T10:00:00Z",
    )])
    .await;
    let nov = t.close("2026-11").await;
    // Late usage in the very millisecond of the close (the test clock stands still), a
    // platform fact too: neither was known to the close.
    t.ingest(&[
        usage(
            "a2",
            "acme",
            "L2",
            "2026-11-20T00:00:00Z",
            "2026-11-20T05:00:00Z",
        ),
        state("s1", "acme", "L1", "stopped", "2026-11-10T08:00:00Z"),
    ])
    .await;
    let store = &t.state.store;
    let report = store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    assert_eq!(report.invoices, 1);
    // The late usage is there to adjust, and a corrupted total is still found.
    let (_, pending) = t.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_ne!(
        pending["pending_adjustments"][0]["difference"], "0.00",
        "{pending}"
    );
    let id = nov[0]["id"].as_str().unwrap();
    billing_store::db::query(&format!(
        "update invoices set body = replace(body, '\"total\":\"', '\"total\":\"9') where id = '{id}'"
    ))
    .execute(store.pool())
    .await
    .unwrap();
    let report = store.finance().verify(None).await.unwrap();
    assert!(
        report
            .differences
            .iter()
            .any(|d| d.kind.as_str() == "invoice"),
        "{:#?}",
        report.differences
    );
}
on_both!(verify_orders_facts_and_closes_by_fold_not_by_clock);

/// Issue 14, hostile input at every door: text that reaches finance's spreadsheets through
/// the CSV exports never starts a formula (an account id may start with `-`, a buyer's name is
/// free text), and negative amounts stay numbers.
async fn csv_exports_never_start_a_formula(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("-A1").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/-A1/profile",
            json!({"name": "=HYPERLINK(\"http://x\")", "tax_id": "91310000MA1FL8XQ30"}).to_string(),
        )
        .await;
    assert!(s.is_success(), "{v}");
    t.ingest(&[usage(
        "a1",
        "-A1",
        "L1",
        "2026-11-10T00:00:00Z",
        "2026-11-10T10:00:00Z",
    )])
    .await;
    t.close("2026-11").await;
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[state("s1", "-A1", "L1", "stopped", "2026-11-10T01:00:00Z")])
        .await;
    t.close("2026-12").await;
    for uri in [
        "/v1/admin/exports/invoices?period=2026-12&format=csv",
        "/v1/admin/exports/journal?period=2026-11&format=csv",
        "/v1/admin/exports/journal?period=2026-12&format=csv",
    ] {
        let (s, body) = t.raw("GET", uri, Some(ADMIN), "", "").await;
        let text = String::from_utf8(body).unwrap();
        assert_eq!(s, StatusCode::OK, "{uri}: {text}");
        assert!(text.contains("'-A1"), "{uri}: {text}");
        for line in text.lines() {
            for cell in line.split(',') {
                let cell = cell.trim_start_matches('"');
                let number = cell.parse::<Decimal>().is_ok();
                assert!(
                    number || !cell.starts_with(['=', '+', '-', '@']),
                    "{uri}: {cell:?} in {line}"
                );
            }
        }
    }
    // A negative adjustment stays a number.
    let (_, body) = t
        .raw(
            "GET",
            "/v1/admin/exports/invoices?period=2026-12&format=csv",
            Some(ADMIN),
            "",
            "",
        )
        .await;
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("adjustment:on_demand") && l.ends_with(",-90.00")),
        "{text}"
    );
}
on_both!(csv_exports_never_start_a_formula);
