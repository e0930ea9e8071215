//! Issue 10: account terms as commands (`PUT` / `DELETE /v1/admin/accounts/{id}/terms/{kind}/{term_id}`,
//! `GET /v1/admin/accounts/{id}/terms`) and what customers see they hold (`GET /v1/balance`),
//! on SQLite and PostgreSQL.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};

/// 2026-11-01T00:00:00Z.
const NOV_1: i64 = 1_793_491_200;
const HOUR: i64 = 3600;
const DAY: i64 = 86_400;

const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "24.00"

[tax]
rate = "0.06"
"#;

/// `hours` of one H100 for `account` from `start`.
fn usage(account: &str, id: &str, start: i64, hours: i64) -> String {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
        "data":{"lease":"L1","resource":"r1","sku":"gpu.h100","class":"on_demand",
                "start":rfc(start),"end":rfc(start + hours * HOUR),"quantity":"1"}})
    .to_string()
}

async fn setup(db: Db, clock_s: i64) -> (TestApp, String) {
    let app = TestApp::fresh(db).await.at(clock_s * 1000);
    app.put_pricebook(BOOK).await;
    let key = app.account("acme").await;
    (app, key)
}

async fn put(app: &TestApp, path: &str, body: Value) -> (StatusCode, Value) {
    app.admin(
        "PUT",
        &format!("/v1/admin/accounts/acme/terms/{path}"),
        body.to_string(),
    )
    .await
}

async fn delete(app: &TestApp, path: &str) -> (StatusCode, Value) {
    app.admin(
        "DELETE",
        &format!("/v1/admin/accounts/acme/terms/{path}"),
        "",
    )
    .await
}

async fn terms_commands(app: &TestApp) -> usize {
    app.state
        .store
        .log()
        .outbox_pending(10_000)
        .await
        .unwrap()
        .iter()
        .filter(|r| r.payload.contains("\"terms."))
        .count()
}

/// A voucher granted by PUT applies to the next close exactly as the same credit written in
/// the price book does with `gpubill rate`: 10 h x 24.00 = 240.00, credit 50.00, net 190.00,
/// tax 11.40, total 201.40. The same PUT twice records one command.
async fn voucher_by_put_equals_the_price_book_credit(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    let voucher =
        json!({"amount": "50.00", "from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z"});
    let (s, v) = put(&app, "credits/v-nov", voucher.clone()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["changed"], true);
    let (s, v) = put(&app, "credits/v-nov", voucher).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["changed"], false, "the same PUT twice changes nothing");
    assert_eq!(terms_commands(&app).await, 1);

    let events = vec![usage("acme", "u1", NOV_1 + 2 * DAY, 10)];
    app.ingest(&events).await;
    let app = app.at(DEC_2_2026_MS);
    app.close("2026-11").await;
    let issued = app
        .state
        .store
        .finance()
        .invoices(Some("acme"), Some("2026-11"))
        .await
        .unwrap();
    let engine = section6(&serde_json::to_value(&issued[0].invoice).unwrap());
    let book = format!(
        "{BOOK}\n[[credits]]\naccount = \"acme\"\nid = \"v-nov\"\namount = \"50.00\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2026-12-01T00:00:00Z\"\n"
    );
    let offline = offline_invoices(&book, &events, "2026-11");
    assert_eq!(engine, offline[0], "engine differs from gpubill rate");
    assert_eq!(engine["credit"], "50.00");
    assert_eq!(engine["total"], "201.40");
}
on_both!(voucher_by_put_equals_the_price_book_credit);

/// A weekly subscription started 2026-11-01, at 2026-11-10 (cycles 0 and 1 started): it may
/// lose cycles 2 and 3 but not cycle 1, and nothing else of it may change; a renewal adds
/// cycles; DELETE keeps the 2 started cycles.
async fn started_subscription_only_loses_future_cycles(db: Db) {
    let (app, key) = setup(db, NOV_1 + 9 * DAY).await;
    let sub = |cycles: i64, price: &str| {
        json!({"sku":"gpu.h100","quantity":"1","cycle":"week","start":"2026-11-01T00:00:00Z",
               "cycles":cycles,"price":price})
    };
    let (s, v) = put(&app, "subscriptions/sub-w", sub(4, "100.00")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = put(&app, "subscriptions/sub-w", sub(1, "100.00")).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v["message"].as_str().unwrap().contains("below 2"), "{v}");
    let (s, v) = put(&app, "subscriptions/sub-w", sub(4, "90.00")).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = put(&app, "subscriptions/sub-w", sub(2, "100.00")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = put(&app, "subscriptions/sub-w", sub(5, "100.00")).await;
    assert_eq!(s, StatusCode::OK, "renewal: {v}");

    let (s, b) = app.get("/v1/balance", &key).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let sw = &b["subscriptions"][0];
    assert_eq!(sw["id"], "sub-w");
    assert_eq!(sw["current_cycle"], 1);
    // Instants in RFC 3339, like every date of the API (issue 24.13).
    assert_eq!(sw["cycle_start"], "2026-11-08T00:00:00Z");
    assert_eq!(sw["cycle_end"], "2026-11-15T00:00:00Z");
    assert_eq!(sw["cycles_left"], 3);

    let (s, v) = delete(&app, "subscriptions/sub-w").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, t) = app.admin("GET", "/v1/admin/accounts/acme/terms", "").await;
    assert_eq!(t["terms"][0]["body"]["cycles"], 2, "{t}");
    let (_, b) = app.get("/v1/balance", &key).await;
    assert_eq!(b["subscriptions"][0]["cycles_left"], 0, "{b}");
    // Two weekly cycles are billed up front in November: 2 x 100.00.
    let (_, cost) = app.get("/v1/cost/current", &key).await;
    assert_eq!(cost["invoice"]["subtotal"], "200.00", "{cost}");
}
on_both!(started_subscription_only_loses_future_cycles);

/// A package not started yet may be deleted; a started one keeps its consumed seconds: it
/// cannot be deleted or lose hours, only gain them. Balance: 10 h less 4 h used = 21,600
/// unit-seconds, then 20 h less 4 h = 57,600.
async fn packages_change_only_before_they_start(db: Db) {
    let (app, key) = setup(db, NOV_1 + 9 * DAY).await;
    let future = json!({"sku":"gpu.h100","hours":"10","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","price":"100.00"});
    let (s, v) = put(&app, "packages/pk-dec", future).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = delete(&app, "packages/pk-dec").await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(true)), "{v}");
    let (s, v) = delete(&app, "packages/pk-dec").await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(false)), "{v}");
    let (s, _) = delete(&app, "packages/never-set").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, t) = app.admin("GET", "/v1/admin/accounts/acme/terms", "").await;
    assert_eq!(t["terms"], json!([]), "{t}");

    let pk = |hours: &str, to: &str| json!({"sku":"gpu.h100","hours":hours,"from":"2026-11-01T00:00:00Z","to":to,"price":"100.00"});
    let (s, v) = put(&app, "packages/pk-nov", pk("10", "2026-12-01T00:00:00Z")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    app.ingest(&[usage("acme", "u1", NOV_1 + DAY, 4)]).await;
    let (_, b) = app.get("/v1/balance", &key).await;
    let p = &b["packages"][0];
    assert_eq!(p["id"], "pk-nov");
    assert_eq!(p["remaining_unit_seconds"], "21600", "{b}");
    assert_eq!(
        (p["from"].clone(), p["to"].clone()),
        (json!("2026-11-01T00:00:00Z"), json!("2026-12-01T00:00:00Z"))
    );
    // The 4 h were covered: only the package's price is owed.
    let (_, cost) = app.get("/v1/cost/current", &key).await;
    assert_eq!(cost["invoice"]["subtotal"], "100.00", "{cost}");

    let (s, v) = delete(&app, "packages/pk-nov").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = put(&app, "packages/pk-nov", pk("5", "2026-12-01T00:00:00Z")).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = put(&app, "packages/pk-nov", pk("20", "2026-11-20T00:00:00Z")).await;
    assert_eq!(s, StatusCode::CONFLICT, "shortened: {v}");
    let (s, v) = put(&app, "packages/pk-nov", pk("20", "2027-01-01T00:00:00Z")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, b) = app.get("/v1/balance", &key).await;
    assert_eq!(b["packages"][0]["remaining_unit_seconds"], "57600", "{b}");
}
on_both!(packages_change_only_before_they_start);

/// Bad bodies get a 400 naming the field, and nothing is stored; admin routes refuse a
/// customer key (403) and a missing token (401); unknown account 404.
async fn bad_terms_are_refused_naming_the_field(db: Db) {
    let (app, key) = setup(db, NOV_1 + 9 * DAY).await;
    let cases = [
        (
            "packages/p1",
            json!({"sku":"gpu.h100","hours":"-1","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","price":"0"}),
            "hours",
        ),
        (
            "packages/p1",
            json!({"sku":"gpu.a100","hours":"1","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","price":"0"}),
            "sku",
        ),
        (
            "packages/p1",
            json!({"sku":"gpu.h100","hours":"1","from":"2027-01-01T00:00:00Z","to":"2026-12-01T00:00:00Z","price":"0"}),
            "to",
        ),
        ("credits/c1", json!({"amount":"1.234"}), "amount"),
        ("credits/c1", json!({"amount":"1.00","rate":"2"}), "rate"),
        (
            "credits/c1",
            json!({"amount":"1.00","account":"other"}),
            "account",
        ),
        ("credits/c1", json!({"amount":null}), "amount"),
        (
            "subscriptions/s1",
            json!({"sku":"gpu.h100","quantity":"1","cycle":"day","start":"2026-12-01T00:00:00Z","cycles":1,"price":"1.00"}),
            "cycle",
        ),
        (
            "subscriptions/s1",
            json!({"sku":"gpu.h100","quantity":"1","cycle":"week","start":"2026-12-01T00:00:00Z","cycles":0,"price":"1.00"}),
            "cycles",
        ),
        ("discounts/d1", json!({"percent":"120"}), "percent"),
        (
            "reservations/r1",
            json!({"sku":"gpu.h100","quantity":"1","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z"}),
            "rate_per_hour",
        ),
        (
            "reservations/r1",
            json!({"sku":"gpu.h100","quantity":1.5,"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","rate_per_hour":"1"}),
            "quantity",
        ),
    ];
    for (path, body, field) in cases {
        let (s, v) = put(&app, path, body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{path} {body}: {v}");
        let msg = v["message"].as_str().unwrap();
        assert!(
            msg.contains(field),
            "{path} {body}: {msg} does not name {field}"
        );
    }
    let (s, v) = app
        .admin("PUT", "/v1/admin/accounts/acme/terms/credits/c1", "[1]")
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = app
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/terms/credits/c%20x",
            json!({"amount":"1"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, _) = put(&app, "vouchers/c1", json!({"amount":"1"})).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = app
        .admin(
            "PUT",
            "/v1/admin/accounts/nobody/terms/credits/c1",
            json!({"amount":"1"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = app
        .admin("GET", "/v1/admin/accounts/nobody/terms", "")
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    let uri = "/v1/admin/accounts/acme/terms/credits/c1";
    let body = json!({"amount":"1.00"}).to_string();
    let (s, _) = app
        .call("PUT", uri, Some(&key), "application/json", body.clone())
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _) = app.call("PUT", uri, None, "application/json", body).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _) = app
        .call("DELETE", uri, Some(&key), "application/json", "")
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _) = app.get("/v1/admin/accounts/acme/terms", &key).await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    let (_, t) = app.admin("GET", "/v1/admin/accounts/acme/terms", "").await;
    assert_eq!(t["terms"], json!([]), "nothing stored: {t}");
    assert_eq!(terms_commands(&app).await, 0);
}
on_both!(bad_terms_are_refused_naming_the_field);

/// Terms survive a restart; a credit drawn by an issued invoice cannot shrink below what was
/// drawn; the balance lists what is held. An open credit of 500.00, 10 h in November (240.00)
/// closed: 260.00 left.
async fn terms_survive_a_restart_and_show_in_the_balance(db: Db) {
    let (app, key) = setup(db, NOV_1 + 9 * DAY).await;
    let (s, v) = put(&app, "credits/welcome", json!({"amount":"500.00"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let pk = json!({"sku":"gpu.h100","hours":"100","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","price":"1000.00"});
    let (s, v) = put(&app, "packages/pk-dec", pk).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = put(&app, "discounts/loyal", json!({"percent":"10"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    app.ingest(&[usage("acme", "u1", NOV_1 + DAY, 10)]).await;
    let app = app.at(DEC_2_2026_MS);
    let closed = app.close("2026-11").await;
    let inv = app
        .state
        .store
        .finance()
        .invoices(Some("acme"), Some("2026-11"))
        .await
        .unwrap();
    let inv = serde_json::to_value(&inv[0].invoice).unwrap();
    // 240.00 - 10 % = 216.00, all of it from the credit.
    assert_eq!(
        (inv["discount"].clone(), inv["credit"].clone()),
        (json!("24.00"), json!("216.00")),
        "{closed}"
    );

    let url = app.shutdown().await;
    let app = TestApp::open(&url).await.at(DEC_2_2026_MS + 3_600_000);
    let (_, t) = app.admin("GET", "/v1/admin/accounts/acme/terms", "").await;
    let kinds: Vec<&str> = t["terms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["credits", "discounts", "packages"], "{t}");

    let (s, v) = put(&app, "credits/welcome", json!({"amount":"200.00"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "drew 216.00 already: {v}");
    let (s, v) = delete(&app, "credits/welcome").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = put(&app, "credits/welcome", json!({"amount":"300.00"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let key2 = {
        // The customer key survived too.
        key
    };
    let (s, b) = app.get("/v1/balance", &key2).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["credits"][0]["id"], "welcome");
    assert_eq!(b["credits"][0]["remaining"], "84.00", "{b}");
    assert_eq!(b["packages"][0]["remaining_unit_seconds"], "360000", "{b}");
    assert_eq!(b["packages"][0]["from"], "2026-12-01T00:00:00Z");
    assert_eq!(b["packages"][0]["to"], "2027-01-01T00:00:00Z");
    // An open credit has no dates: null, not a number.
    assert_eq!(b["credits"][0]["from"], Value::Null, "{b}");
    assert_eq!(b["sla_compensation_credited"], "0");
    // December: the package's 1000.00 less 10 %, then 84.00 of credit.
    let (_, cost) = app.get("/v1/cost/current", &key2).await;
    assert_eq!(cost["invoice"]["credit"], "84.00", "{cost}");
}
on_both!(terms_survive_a_restart_and_show_in_the_balance);

/// The commands topic carries the terms: applying the recorded commands (what `gpubill
/// replay` reads from the topic; here from the outbox rows the relay would publish) to an
/// empty database, with the same usage before the close, reproduces the terms, their
/// revisions and byte-identical invoices (a started subscription ended by DELETE comes back
/// with its started cycles).
async fn replayed_commands_reproduce_the_terms(db: Db) {
    let (app, _) = setup(db, NOV_1 + 9 * DAY).await;
    let sub = json!({"sku":"gpu.h100","quantity":"1","cycle":"week","start":"2026-11-01T00:00:00Z","cycles":4,"price":"100.00"});
    assert_eq!(
        put(&app, "subscriptions/sub-w", sub).await.0,
        StatusCode::OK
    );
    assert_eq!(delete(&app, "subscriptions/sub-w").await.0, StatusCode::OK);
    assert_eq!(
        put(
            &app,
            "credits/v1",
            json!({"amount":"30.00","to":"2026-12-01T00:00:00Z"})
        )
        .await
        .0,
        StatusCode::OK
    );
    assert_eq!(
        put(&app, "discounts/d", json!({"percent":"5"})).await.0,
        StatusCode::OK
    );
    let pk = json!({"sku":"gpu.h100","hours":"1","from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","price":"1.00"});
    assert_eq!(put(&app, "packages/gone", pk).await.0, StatusCode::OK);
    assert_eq!(delete(&app, "packages/gone").await.0, StatusCode::OK);
    let events = vec![usage("acme", "u1", NOV_1 + DAY, 30)];
    app.ingest(&events).await;
    let app = app.at(DEC_2_2026_MS);
    app.close("2026-11").await;

    let commands: Vec<billing_store::Command> = app
        .state
        .store
        .log()
        .outbox_pending(10_000)
        .await
        .unwrap()
        .iter()
        .filter(|r| r.topic == app.state.store.topics().commands)
        .map(|r| serde_json::from_str(&r.payload).unwrap())
        .collect();
    let replayed = TestApp::fresh(db).await.at(DEC_2_2026_MS);
    for c in &commands {
        if matches!(c, billing_store::Command::ClosePeriod { .. }) {
            replayed.ingest(&events).await;
        }
        replayed.state.store.log().apply_command(c).await.unwrap();
    }
    for uri in ["/v1/admin/accounts/acme/terms"] {
        let (_, a) = app.admin("GET", uri, "").await;
        let (_, b) = replayed.admin("GET", uri, "").await;
        assert_eq!(a, b);
        assert_eq!(a["terms"].as_array().unwrap().len(), 3, "{a}");
    }
    let bodies = |issued: Vec<billing_store::IssuedInvoice>| -> Vec<Value> {
        issued
            .iter()
            .map(|i| section6(&serde_json::to_value(&i.invoice).unwrap()))
            .collect()
    };
    let a = bodies(
        app.state
            .store
            .finance()
            .invoices(None, Some("2026-11"))
            .await
            .unwrap(),
    );
    let b = bodies(
        replayed
            .state
            .store
            .finance()
            .invoices(None, Some("2026-11"))
            .await
            .unwrap(),
    );
    assert_eq!(a, b);
    // 2 weekly cycles (200.00); the 30 h of cycle 0 are covered by the subscription; 5 % off,
    // 30.00 of voucher.
    assert_eq!(a[0]["subtotal"], "200.00", "{}", a[0]);
    assert_eq!(a[0]["discount"], "10.00");
    assert_eq!(a[0]["credit"], "30.00");
}
on_both!(replayed_commands_reproduce_the_terms);

/// Every kind set by PUT rates as the same entries written in the price book do with `gpubill
/// rate`: a reservation, a discount, a package, a subscription and an expiring credit over a
/// month of usage; and a price book version that would not accept the terms is refused.
async fn every_kind_by_put_equals_the_price_book(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    let terms = [
        (
            "reservations/r1",
            json!({"sku":"gpu.h100","quantity":"1","from":"2026-11-03T00:00:00Z","to":"2026-11-05T00:00:00Z","rate_per_hour":"15.00"}),
        ),
        ("discounts/d1", json!({"percent":"10"})),
        (
            "packages/pk",
            json!({"sku":"gpu.h100","hours":"5","from":"2026-11-06T00:00:00Z","to":"2026-11-20T00:00:00Z","price":"60.00"}),
        ),
        (
            "subscriptions/sub",
            json!({"sku":"gpu.h100","quantity":"1","cycle":"week","start":"2026-11-10T00:00:00Z","cycles":1,"price":"200.00"}),
        ),
        (
            "credits/v",
            json!({"amount":"25.00","from":"2026-11-01T00:00:00Z","to":"2026-11-15T00:00:00Z"}),
        ),
    ];
    for (path, body) in &terms {
        let (s, v) = put(&app, path, body.clone()).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
    }
    let book = format!(
        r#"{BOOK}
[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "1"
from = "2026-11-03T00:00:00Z"
to = "2026-11-05T00:00:00Z"
rate_per_hour = "15.00"
[[discounts]]
account = "acme"
percent = "10"
[[packages]]
account = "acme"
id = "pk"
sku = "gpu.h100"
hours = "5"
from = "2026-11-06T00:00:00Z"
to = "2026-11-20T00:00:00Z"
price = "60.00"
[[subscriptions]]
account = "acme"
id = "sub"
sku = "gpu.h100"
quantity = "1"
cycle = "week"
start = "2026-11-10T00:00:00Z"
cycles = 1
price = "200.00"
[[credits]]
account = "acme"
id = "v"
amount = "25.00"
from = "2026-11-01T00:00:00Z"
to = "2026-11-15T00:00:00Z"
"#
    );
    let events: Vec<String> = (0..8)
        .map(|d| {
            usage(
                "acme",
                &format!("u{d}"),
                NOV_1 + (2 + 2 * d) * DAY + 3 * HOUR,
                7,
            )
        })
        .collect();
    app.ingest(&events).await;
    // A version without the sku the terms name is refused, naming the term.
    let (s, v) = app
        .call(
            "PUT",
            "/v1/admin/pricebook",
            Some(ADMIN),
            "application/toml",
            "currency = \"CNY\"\n[skus.\"gpu.a100\"]\nrate_per_hour = \"1\"\n",
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v["message"].as_str().unwrap().contains("sku"), "{v}");

    let app = app.at(DEC_2_2026_MS);
    app.close("2026-11").await;
    let issued = app
        .state
        .store
        .finance()
        .invoices(Some("acme"), Some("2026-11"))
        .await
        .unwrap();
    let engine = section6(&serde_json::to_value(&issued[0].invoice).unwrap());
    let offline = offline_invoices(&book, &events, "2026-11");
    assert_eq!(engine, offline[0], "engine differs from gpubill rate");
    let text = engine.to_string();
    for component in [
        "reserved_commitment",
        "package_usage",
        "subscription",
        "\"credit\":\"25.00\"",
    ] {
        assert!(text.contains(component), "no {component}: {text}");
    }
}
on_both!(every_kind_by_put_equals_the_price_book);

/// Quotas and authorization rate with the command terms: 4 h used (96.00 + 6 % = 101.76) is
/// over a spend limit of 100.00 until a free trial package of 10 h granted by PUT covers it.
async fn authorization_sees_the_command_terms(db: Db) {
    let (app, key) = setup(db, NOV_1 + 9 * DAY).await;
    app.ingest(&[usage("acme", "u1", NOV_1 + DAY, 4)]).await;
    let (s, v) = app
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            json!({"spend_limit":"100.00"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let ask =
        json!({"account":"acme","sku":"gpu.h100","quantity":"1","seconds":100,"ttl_seconds":60})
            .to_string();
    let (_, v) = app
        .call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            ask.clone(),
        )
        .await;
    assert_eq!(v["decision"], "denied", "{v}");
    let trial = json!({"sku":"gpu.h100","hours":"10","from":"2026-11-01T00:00:00Z","to":"2026-12-01T00:00:00Z","price":"0"});
    let (s, v) = put(&app, "packages/trial", trial).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, b) = app.get("/v1/balance", &key).await;
    assert_eq!(b["period_cost"], "0.00", "{b}");
    assert_eq!(b["packages"][0]["remaining_unit_seconds"], "21600", "{b}");
    let (_, v) = app
        .call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            ask,
        )
        .await;
    assert_eq!(v["decision"], "allowed", "{v}");
}
on_both!(authorization_sees_the_command_terms);

/// The Dec invoice's adjustment lines of November as (component, amount).
fn nov_lines(dec: &Value) -> Vec<(String, String)> {
    dec[0]["adjustments"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|l| l["period"] == "2026-11")
                .map(|l| {
                    (
                        l["component"].as_str().unwrap().to_string(),
                        l["amount"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn assert_verify_clean(app: &TestApp) {
    let report = app.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
}

/// Issue 24.1, reproduced: November is closed (10 h, 254.40), then an undated 10% discount is
/// set, then a late November hour arrives. The discount did not exist when November closed:
/// November's adjustment is only the late usage (24.00 and its tax 1.44), never a discount
/// line; December (one hour) gets the discount; `gpubill verify` finds nothing.
async fn an_undated_discount_after_a_close_does_not_reach_the_closed_period(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    app.ingest(&[usage("acme", "u1", NOV_1 + 2 * DAY, 10)])
        .await;
    let app = app.at(DEC_2_2026_MS);
    let nov = app.close("2026-11").await;
    assert_eq!(nov[0]["total"], "254.40", "{nov}");
    let (s, v) = put(&app, "discounts/loyal", json!({"percent": "10"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_verify_clean(&app).await;

    let app = app.at(JAN_2_2027_MS);
    app.ingest(&[
        usage("acme", "u2", NOV_1 + 19 * DAY, 1),
        usage("acme", "u3", NOV_1 + 34 * DAY, 1),
    ])
    .await;
    let (_, pending) = app.get("/v1/admin/adjustments?period=2026-11", ADMIN).await;
    assert_eq!(
        pending["pending_adjustments"][0]["difference"], "25.44",
        "{pending}"
    );
    let dec = app.close("2026-12").await;
    assert_eq!(
        nov_lines(&dec),
        vec![
            ("on_demand".to_string(), "24.00".to_string()),
            ("tax".to_string(), "1.44".to_string())
        ],
        "{dec}"
    );
    assert_eq!(dec[0]["discount"], "2.40", "{dec}");
    assert_eq!(dec[0]["amount_due"], "48.34", "22.90 + 25.44: {dec}");
    assert_verify_clean(&app).await;
}
on_both!(an_undated_discount_after_a_close_does_not_reach_the_closed_period);

/// Issue 24.1: a credit dated into a closed November (set after its close) reaches it: the
/// next close adjusts November by the credit and its tax (-50.00, -3.00) with no late event;
/// an undated credit set at the same time does not (December draws it). `verify` agrees.
async fn a_credit_dated_into_a_closed_period_is_an_adjustment(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    app.ingest(&[usage("acme", "u1", NOV_1 + 2 * DAY, 10)])
        .await;
    let app = app.at(DEC_2_2026_MS);
    app.close("2026-11").await;
    let dated =
        json!({"amount": "50.00", "from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z"});
    let (s, v) = put(&app, "credits/goodwill-nov", dated).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = put(&app, "credits/welcome", json!({"amount": "10.00"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let app = app.at(JAN_2_2027_MS);
    app.ingest(&[usage("acme", "u3", NOV_1 + 34 * DAY, 1)])
        .await;
    let dec = app.close("2026-12").await;
    assert_eq!(
        nov_lines(&dec),
        vec![
            ("credit".to_string(), "-50.00".to_string()),
            ("tax".to_string(), "-3.00".to_string())
        ],
        "{dec}"
    );
    // December: 24.00 less the undated 10.00, tax 0.84: 14.84, against -53.00.
    assert_eq!(dec[0]["credit"], "10.00", "{dec}");
    assert_eq!(dec[0]["total"], "14.84", "{dec}");
    assert_eq!(dec[0]["amount_due"], "0.00", "{dec}");
    assert_verify_clean(&app).await;
}
on_both!(a_credit_dated_into_a_closed_period_is_an_adjustment);

/// The terms commands recorded so far, as the commands topic carries them.
async fn term_commands(app: &TestApp) -> Vec<billing_store::Command> {
    app.state
        .store
        .log()
        .outbox_pending(10_000)
        .await
        .unwrap()
        .iter()
        .filter(|r| r.topic == app.state.store.topics().commands)
        .map(|r| serde_json::from_str(&r.payload).unwrap())
        .filter(|c| {
            matches!(
                c,
                billing_store::Command::PutTerm { .. } | billing_store::Command::DeleteTerm { .. }
            )
        })
        .collect()
}

/// Section 20 by command (issue 26): a one-off charge PUT on 2026-11-20 bills once, as a
/// `charge` line of November: 10 h x 24.00 = 240.00 plus the charge's 800.00 = 1,040.00,
/// tax 6 % 62.40, total 1,102.40, exactly what `gpubill rate` gives with the same charge
/// written as a `[[charges]]` entry. A negative or zero amount is refused naming `amount`
/// and stores nothing; the accepted PUT is a `terms.put` command of kind `charges`, which a
/// replay applies to the same term.
async fn a_charge_by_put_equals_the_price_book_charge(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    for amount in ["-800.00", "0.00"] {
        let bad = json!({"amount": amount, "at": "2026-11-20T00:00:00Z"});
        let (s, v) = put(&app, "charges/bad", bad).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(message.contains("charges.bad.amount"), "{message}");
    }
    assert_eq!(
        terms_commands(&app).await,
        0,
        "a refused charge records nothing"
    );
    let charge =
        json!({"description": "数据迁移服务", "amount": "800.00", "at": "2026-11-20T00:00:00Z"});
    let (s, v) = put(&app, "charges/migration-2026-11", charge.clone()).await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(true)), "{v}");
    let commands = term_commands(&app).await;
    assert!(
        matches!(&commands[..], [billing_store::Command::PutTerm { kind, term_id, body, .. }]
            if kind == "charges" && term_id == "migration-2026-11" && body == charge.as_object().unwrap()),
        "{commands:?}"
    );

    let events = vec![usage("acme", "u1", NOV_1 + 2 * DAY, 10)];
    app.ingest(&events).await;
    let app = app.at(DEC_2_2026_MS);
    let closed = app.close("2026-11").await;
    let engine = section6(&closed[0]);
    let book = format!(
        "{BOOK}\n[[charges]]\naccount = \"acme\"\nid = \"migration-2026-11\"\ndescription = \"数据迁移服务\"\namount = \"800.00\"\nat = \"2026-11-20T00:00:00Z\"\n"
    );
    let offline = offline_invoices(&book, &events, "2026-11");
    assert_eq!(engine, offline[0], "engine differs from gpubill rate");
    let charge_line = engine["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["component"] == "charge")
        .unwrap_or_else(|| panic!("no charge line: {engine}"));
    assert_eq!(charge_line["charge"], "migration-2026-11");
    assert_eq!(charge_line["description"], "数据迁移服务");
    assert_eq!(
        (&charge_line["quantity"], &charge_line["unit"]),
        (&json!("1"), &json!("charge"))
    );
    assert_eq!(charge_line["amount"], "800.00");
    assert_eq!(engine["subtotal"], "1040.00");
    assert_eq!(engine["tax"], "62.40");
    assert_eq!(engine["total"], "1102.40");

    let replayed = TestApp::fresh(db).await.at(DEC_2_2026_MS);
    replayed.put_pricebook(BOOK).await;
    replayed.account("acme").await;
    for c in &commands {
        replayed.state.store.log().apply_command(c).await.unwrap();
    }
    let uri = "/v1/admin/accounts/acme/terms";
    let ((_, a), (_, b)) = (
        app.admin("GET", uri, "").await,
        replayed.admin("GET", uri, "").await,
    );
    assert_eq!(a["terms"], b["terms"]);
    assert_eq!(a["terms"][0]["kind"], "charges", "{a}");
}
on_both!(a_charge_by_put_equals_the_price_book_charge);

/// A charge whose period is closed was invoiced (1,102.40 in November, as above): it may
/// neither change nor be deleted (409), while a charge of the open December may change and
/// be deleted. A new charge dated into the closed November (set after the close, 50.00)
/// reaches it as an adjustment at the next close, like late usage: 50.00 and its tax 3.00 on
/// December's invoice, and `gpubill verify` finds nothing.
async fn a_charge_of_a_closed_period_stays_as_invoiced(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    let charge = |amount: &str, at: &str| json!({"amount": amount, "at": at});
    let nov = "2026-11-20T00:00:00Z";
    let (s, v) = put(&app, "charges/migration", charge("800.00", nov)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    app.ingest(&[usage("acme", "u1", NOV_1 + 2 * DAY, 10)])
        .await;
    let app = app.at(DEC_2_2026_MS);
    let closed = app.close("2026-11").await;
    assert_eq!(closed[0]["total"], "1102.40", "{closed}");

    let (s, v) = put(&app, "charges/migration", charge("900.00", nov)).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v["message"].as_str().unwrap().contains("closed"), "{v}");
    let (s, v) = put(
        &app,
        "charges/migration",
        charge("800.00", "2026-12-05T00:00:00Z"),
    )
    .await;
    assert_eq!(
        s,
        StatusCode::CONFLICT,
        "moved out of its closed period: {v}"
    );
    let (s, v) = delete(&app, "charges/migration").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = put(&app, "charges/migration", charge("800", nov)).await;
    assert_eq!(
        s,
        StatusCode::OK,
        "the same charge written differently: {v}"
    );

    let dec = "2026-12-10T00:00:00Z";
    assert_eq!(
        put(&app, "charges/dec", charge("10.00", dec)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        put(&app, "charges/dec", charge("20.00", dec)).await.0,
        StatusCode::OK
    );
    let (s, v) = delete(&app, "charges/dec").await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(true)), "{v}");
    let (s, v) = put(
        &app,
        "charges/late-fee",
        charge("50.00", "2026-11-25T00:00:00Z"),
    )
    .await;
    assert_eq!(
        s,
        StatusCode::OK,
        "a new charge dated into a closed period: {v}"
    );
    assert_verify_clean(&app).await;

    let app = app.at(JAN_2_2027_MS);
    let dec = app.close("2026-12").await;
    assert_eq!(
        nov_lines(&dec),
        vec![
            ("charge".to_string(), "50.00".to_string()),
            ("tax".to_string(), "3.00".to_string())
        ],
        "{dec}"
    );
    assert_eq!(dec[0]["total"], "0.00", "nothing in December: {dec}");
    assert_eq!(dec[0]["amount_due"], "53.00", "{dec}");
    assert_verify_clean(&app).await;
}
on_both!(a_charge_of_a_closed_period_stays_as_invoiced);

/// Sections 16 and 17 by command (issue 26): a scoped, dated, capped subsidy beside a plain
/// discount, a monthly plan ended early with a prorata refund and an auto-renewing weekly
/// plan, all set by PUT, close November exactly as the same entries in the price book do
/// with `gpubill rate`. Worked numbers for acme (one H100 at 24.00):
/// - the monthly plan's cycle 1 (2026-11-10 to 12-10) starts in November: 300.00; it ends
///   2026-11-25 with 15 of its 30 days unused: 150.00 refunded into the credit balance, a
///   `subscription_refund` line of 1 x 15 days = 1,296,000 unit-seconds;
/// - the weekly plan's first cycle starts 2026-11-28: 50.00;
/// - usage: 8 h on 11-12 (the monthly plan covers it) and 5 h on 11-28 (the weekly one) are
///   `reserved_usage` (13 h = 46,800 unit-seconds); 10 h on 11-26, after the monthly plan's
///   end, are on-demand: 240.00;
/// - subtotal 590.00; discount: plain 5 % = 29.50, the subsidy 30 % of the matching 240.00 =
///   72.00 held to its cap 40.00: 69.50; credit min(150.00, 520.50) = 150.00; net 370.50,
///   tax 22.23, total 392.73.
///
/// `cycles` with `auto_renew = true` and `id` in a discount body are refused naming the keys.
async fn scoped_discounts_and_ending_subscriptions_by_put_equal_the_price_book(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    let weekly = json!({"sku":"gpu.h100","quantity":"1","cycle":"week",
        "start":"2026-11-28T00:00:00Z","auto_renew":true,"price":"50.00"});
    let mut both = weekly.clone();
    both["cycles"] = json!(3);
    let (s, v) = put(&app, "subscriptions/weekly", both).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let message = v["message"].as_str().unwrap();
    assert!(
        message.contains("subscriptions.weekly.cycles") && message.contains("auto_renew"),
        "{message}"
    );
    let (s, v) = put(&app, "discounts/d", json!({"percent": "5", "id": "x"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("discounts.d.id"),
        "{v}"
    );

    let terms = [
        ("subscriptions/weekly", weekly),
        (
            "subscriptions/monthly",
            json!({"sku":"gpu.h100","quantity":"1","cycle":"month","start":"2026-10-10T00:00:00Z",
                "cycles":3,"price":"300.00","end":"2026-11-25T00:00:00Z","refund":"prorata"}),
        ),
        ("discounts/loyal", json!({"percent":"5"})),
        (
            "discounts/h100-subsidy",
            json!({"percent":"30","skus":["gpu.h100"],"components":["on_demand"],
                "from":"2026-11-05T00:00:00Z","to":"2026-12-01T00:00:00Z","cap":"40.00"}),
        ),
    ];
    for (path, body) in &terms {
        let (s, v) = put(&app, path, body.clone()).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
    }
    assert_eq!(terms_commands(&app).await, 4);
    let book = format!(
        r#"{BOOK}
[[discounts]]
account = "acme"
percent = "5"
[[discounts]]
account = "acme"
percent = "30"
skus = ["gpu.h100"]
components = ["on_demand"]
from = "2026-11-05T00:00:00Z"
to = "2026-12-01T00:00:00Z"
cap = "40.00"
[[subscriptions]]
account = "acme"
id = "monthly"
sku = "gpu.h100"
quantity = "1"
cycle = "month"
start = "2026-10-10T00:00:00Z"
cycles = 3
price = "300.00"
end = "2026-11-25T00:00:00Z"
refund = "prorata"
[[subscriptions]]
account = "acme"
id = "weekly"
sku = "gpu.h100"
quantity = "1"
cycle = "week"
start = "2026-11-28T00:00:00Z"
auto_renew = true
price = "50.00"
"#
    );
    let events = vec![
        usage("acme", "u1", NOV_1 + 11 * DAY, 8),
        usage("acme", "u2", NOV_1 + 25 * DAY, 10),
        usage("acme", "u3", NOV_1 + 27 * DAY + 10 * HOUR, 5),
    ];
    // After November: events ending more than a day after the clock are refused (too_early).
    let app = app.at(DEC_2_2026_MS);
    app.ingest(&events).await;
    let closed = app.close("2026-11").await;
    let engine = section6(&closed[0]);
    let offline = offline_invoices(&book, &events, "2026-11");
    assert_eq!(engine, offline[0], "engine differs from gpubill rate");
    let line = |component: &str, subscription: Option<&str>| -> Value {
        engine["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| {
                l["component"] == component && subscription.is_none_or(|s| l["subscription"] == s)
            })
            .cloned()
            .unwrap_or_else(|| panic!("no {component} line: {engine}"))
    };
    assert_eq!(line("on_demand", None)["amount"], "240.00");
    assert_eq!(line("reserved_usage", None)["quantity"], "46800");
    assert_eq!(line("subscription", Some("monthly"))["amount"], "300.00");
    assert_eq!(line("subscription", Some("weekly"))["amount"], "50.00");
    let refund = line("subscription_refund", Some("monthly"));
    assert_eq!(
        (&refund["quantity"], &refund["refund"]),
        (&json!("1296000"), &json!("150.00")),
        "{refund}"
    );
    for (field, amount) in [
        ("subtotal", "590.00"),
        ("discount", "69.50"),
        ("credit", "150.00"),
        ("tax", "22.23"),
        ("total", "392.73"),
    ] {
        assert_eq!(engine[field], amount, "{field}: {engine}");
    }
}
on_both!(scoped_discounts_and_ending_subscriptions_by_put_equal_the_price_book);

/// Section 17 by command, ending a started plan early: a yearly plan from 2026-01-01 at
/// 1,200.00 that renews is set by command; on 2026-11-16 (the clock) an `end` on 11-10 is a
/// 409 (elapsed seconds stay billed), and `end` = now with `refund = "prorata"` is accepted:
/// the balance showed that ending it now refunds round(1200 x 46 / 365, 2) = 151.23 (46 of
/// 365 days unused) and that it renews on 2027-01-01. November's close equals `gpubill rate`
/// with the plan so ended: a `subscription_refund` line of 151.23, credited against the 4 h
/// of on-demand usage on 11-20 after the plan ended (96.00 + 6 % tax).
async fn a_started_plan_ended_by_command_refunds_like_the_price_book(db: Db) {
    let (app, key) = setup(db, NOV_1 + 15 * DAY).await;
    let plan = json!({"sku":"gpu.h100","quantity":"1","cycle":"year",
        "start":"2026-01-01T00:00:00Z","auto_renew":true,"refund":"prorata","price":"1200.00"});
    let (s, v) = put(&app, "subscriptions/y", plan.clone()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, b) = app.get("/v1/balance", &key).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let status = &b["subscriptions"][0];
    assert_eq!(status["next_cycle_start"], "2027-01-01T00:00:00Z", "{b}");
    assert_eq!(status["refund_if_ended_now"], "151.23", "{b}");
    let mut early = plan.clone();
    early["end"] = json!("2026-11-10T00:00:00Z");
    let (s, v) = put(&app, "subscriptions/y", early).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v.to_string().contains("2026-11-10T00:00:00Z"), "{v}");
    let mut sold = plan.clone();
    sold["price"] = json!("1000.00");
    let (s, v) = put(&app, "subscriptions/y", sold).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let mut ended = plan.clone();
    ended["end"] = json!("2026-11-16T00:00:00Z");
    let (s, v) = put(&app, "subscriptions/y", ended).await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let book = format!(
        r#"{BOOK}
[[subscriptions]]
account = "acme"
id = "y"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-01-01T00:00:00Z"
auto_renew = true
refund = "prorata"
price = "1200.00"
end = "2026-11-16T00:00:00Z"
"#
    );
    let events = vec![usage("acme", "u1", NOV_1 + 19 * DAY, 4)];
    let app = app.at(DEC_2_2026_MS);
    app.ingest(&events).await;
    let closed = app.close("2026-11").await;
    let engine = section6(&closed[0]);
    assert_eq!(
        engine,
        offline_invoices(&book, &events, "2026-11")[0],
        "engine differs from gpubill rate"
    );
    let refund = engine["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["component"] == "subscription_refund")
        .cloned()
        .unwrap_or_else(|| panic!("no refund line: {engine}"));
    assert_eq!(refund["refund"], "151.23", "{refund}");
    assert_eq!(engine["subtotal"], "96.00", "{engine}");
    assert_eq!(engine["credit"], "96.00", "{engine}");
}
on_both!(a_started_plan_ended_by_command_refunds_like_the_price_book);

/// Issue 24.1 with section 16's dates: November is closed (10 h, 254.40), then a 10 %
/// discount dated November (from 11-01 to 12-01) is set. It is dated into November, so the
/// December close adjusts November by it: -24.00 and its tax -1.44, with no late event;
/// December (one hour, 25.44) is outside its dates. `gpubill verify` finds nothing.
async fn a_dated_discount_set_after_a_close_is_an_adjustment(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    app.ingest(&[usage("acme", "u1", NOV_1 + 2 * DAY, 10)])
        .await;
    let app = app.at(DEC_2_2026_MS);
    let nov = app.close("2026-11").await;
    assert_eq!(nov[0]["total"], "254.40", "{nov}");
    let dated =
        json!({"percent": "10", "from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z"});
    let (s, v) = put(&app, "discounts/nov-goodwill", dated).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_verify_clean(&app).await;
    let app = app.at(JAN_2_2027_MS);
    app.ingest(&[usage("acme", "u2", NOV_1 + 34 * DAY, 1)])
        .await;
    let dec = app.close("2026-12").await;
    assert_eq!(
        nov_lines(&dec),
        vec![
            ("discount".to_string(), "-24.00".to_string()),
            ("tax".to_string(), "-1.44".to_string())
        ],
        "{dec}"
    );
    assert_eq!(dec[0]["discount"], "0.00", "{dec}");
    assert_eq!(dec[0]["total"], "25.44", "{dec}");
    assert_verify_clean(&app).await;
}
on_both!(a_dated_discount_set_after_a_close_is_an_adjustment);

/// Section 19 by command: acme's timezone set to Asia/Shanghai (the book's is UTC) moves its
/// November to 2026-10-31T16:00Z .. 2026-11-30T16:00Z. Usage of 10 h on 2026-11-30 from 14:00Z
/// has 2 h in that November (48.00, tax 2.88, total 50.88) and 8 h in December: exactly
/// `gpubill rate` with the same `[[accounts]]` entry. The term id must be the account's own
/// (400 naming it), an unknown timezone is refused naming `timezone`; once acme has an
/// invoice its timezone may no longer change (409).
async fn an_account_timezone_by_put_moves_its_periods(db: Db) {
    let (app, _) = setup(db, NOV_1 + 20 * DAY).await;
    let (s, v) = put(&app, "accounts/other", json!({"timezone": "UTC"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["message"].as_str().unwrap().contains("accounts"), "{v}");
    let (s, v) = put(&app, "accounts/acme", json!({"timezone": "Mars/Olympus"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["message"].as_str().unwrap().contains("timezone"), "{v}");
    let (s, v) = put(&app, "accounts/acme", json!({"timezone": "Asia/Shanghai"})).await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(true)), "{v}");

    let events = vec![usage("acme", "u1", NOV_1 + 29 * DAY + 14 * HOUR, 10)];
    let app = app.at(DEC_2_2026_MS);
    app.ingest(&events).await;
    let closed = app.close("2026-11").await;
    let engine = section6(&closed[0]);
    let book = format!("{BOOK}\n[[accounts]]\nid = \"acme\"\ntimezone = \"Asia/Shanghai\"\n");
    let offline = offline_invoices(&book, &events, "2026-11");
    assert_eq!(engine, offline[0], "engine differs from gpubill rate");
    assert_eq!(
        engine["period"]["start"], "2026-10-31T16:00:00Z",
        "{engine}"
    );
    assert_eq!(engine["subtotal"], "48.00", "{engine}");
    assert_eq!(engine["total"], "50.88", "{engine}");

    let (s, v) = put(&app, "accounts/acme", json!({"timezone": "UTC"})).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = delete(&app, "accounts/acme").await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
}
on_both!(an_account_timezone_by_put_moves_its_periods);
