//! Issue 26, `POST /v1/estimate`: an estimate is what the engine bills for the same lease
//! ingested alone for a fresh account, a bad field is refused naming it, and nothing is
//! written. On both backends.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};

/// worked-1's book: Asia/Shanghai, tiers, a minimum, off-peak 22:00 to 06:00 at 0.70, tax 6%.
fn book() -> String {
    fixture("worked-1/pricebook.toml")
}

/// 3 h of 2 GPUs from 20:30 local: crosses the off-peak boundary and the first tier.
const START: &str = "2026-11-10T20:30:00+08:00";
const END: &str = "2026-11-10T23:30:00+08:00";
const SECONDS: i64 = 10_800;

fn lease() -> Value {
    json!({"sku": "gpu.h100-80g", "quantity": "2", "class": "on_demand", "start": START, "duration_seconds": SECONDS})
}

fn usage_event(account: &str) -> String {
    json!({"specversion": "1.0", "id": "e1", "source": "node/1", "type": "gpu.usage", "subject": account,
        "data": {"lease": "L1", "resource": "gpu0", "sku": "gpu.h100-80g", "class": "on_demand",
                 "start": START, "end": END, "quantity": "2"}})
    .to_string()
}

async fn post(t: &TestApp, token: &str, body: &Value) -> (StatusCode, Value) {
    t.call(
        "POST",
        "/v1/estimate",
        Some(token),
        "application/json",
        body.to_string(),
    )
    .await
}

/// What the store holds, as the API reads it (and every projection on PostgreSQL).
async fn written(t: &TestApp, db: &Db) -> Vec<String> {
    let mut out = Vec::new();
    for uri in [
        "/v1/admin/accounts",
        "/v1/admin/dead-letters",
        "/v1/admin/audit",
    ] {
        let (_, v) = t.admin("GET", uri, "").await;
        out.push(v.to_string());
    }
    if matches!(db, Db::Postgres) {
        out.extend(projections(&t.state.store).await);
    }
    out
}

async fn estimate_is_what_the_engine_bills(db: Db) {
    // The estimate, for a fresh account.
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book()).await;
    let key = t.account("zeta").await;
    let before = written(&t, &db).await;
    let (s, est) = post(&t, &key, &lease()).await;
    assert_eq!(s, StatusCode::OK, "{est}");
    assert_eq!(est["account"], "zeta");
    assert_eq!(est["currency"], "CNY");
    assert!(
        est["basis"].as_str().unwrap().contains("only usage"),
        "{est}"
    );
    assert_eq!(est["periods"].as_array().unwrap().len(), 1, "{est}");
    // The admin names the account and gets the same answer.
    let mut named = lease();
    named["account"] = json!("zeta");
    let (s, by_admin) = t.admin("POST", "/v1/estimate", named.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{by_admin}");
    assert_eq!(by_admin, est);
    assert_eq!(written(&t, &db).await, before, "an estimate writes nothing");

    // The same lease ingested alone into another fresh app, November closed.
    let other = TestApp::fresh(db).await;
    other.put_pricebook(&book()).await;
    let key2 = other.account("zeta").await;
    let r = other.ingest(&[usage_event("zeta")]).await;
    assert_eq!(r["accepted"], 1, "{r}");
    other.close("2026-11").await;
    let (_, docs) = other.get("/v1/invoices?period=2026-11", &key2).await;
    let inv = &docs[0];
    assert_eq!(inv["kind"], "invoice", "{docs}");
    let period = &est["periods"][0];
    assert_eq!(period["lines"], inv["lines"], "{est}\n{inv}");
    assert!(period["lines"].as_array().unwrap().len() >= 2, "{est}");
    for f in ["subtotal", "discount", "tax", "total"] {
        assert_eq!(period[f], inv[f], "{f}: {est}\n{inv}");
        assert_eq!(est[f], inv[f], "{f}");
    }
    assert_eq!(period["period"], inv["period"]);
}
on_both!(estimate_is_what_the_engine_bills);

async fn a_bad_field_is_refused_naming_it(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&book()).await;
    let key = t.account("zeta").await;
    let before = written(&t, &db).await;
    let cases: [(&str, Value); 9] = [
        ("sku", json!("gpu.nope")),
        ("quantity", json!("0")),
        ("quantity", json!("10001")),
        ("class", json!("reserved")),
        ("region", json!("mars")),
        ("start", json!("tomorrow")),
        ("duration_seconds", json!(0)),
        ("duration_seconds", json!(31 * 86_400 + 1)),
        ("duration_seconds", json!(1.5)),
    ];
    for (field, value) in cases {
        let mut body = lease();
        body[field] = value.clone();
        let (s, v) = post(&t, &key, &body).await;
        assert_eq!(
            s,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{field} = {value}: {v}"
        );
        let message = v["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{field}:")),
            "{field} = {value}: {v}"
        );
    }
    // A customer key cannot price for an account outside its scope (a 404, as an unknown
    // account: issue 27); the ingest token cannot ask.
    let mut other = lease();
    other["account"] = json!("acme");
    let (s, _) = post(&t, &key, &other).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = post(&t, INGEST, &lease()).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // The admin must name an account.
    let (s, v) = t.admin("POST", "/v1/estimate", lease().to_string()).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["message"].as_str().unwrap().starts_with("account:"),
        "{v}"
    );
    assert_eq!(
        written(&t, &db).await,
        before,
        "a refused estimate writes nothing"
    );
}
on_both!(a_bad_field_is_refused_naming_it);

/// The answer has exactly the fields the OpenAPI document lists for it.
#[tokio::test]
async fn the_answer_is_the_documented_shape() {
    let t = TestApp::fresh(Db::Sqlite).await;
    t.put_pricebook(&book()).await;
    let key = t.account("zeta").await;
    let (_, est) = post(&t, &key, &lease()).await;
    let (s, doc) = t.get("/openapi.json", &key).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        doc["paths"]["/v1/estimate"]["post"].is_object(),
        "not documented"
    );
    let schemas = &doc["components"]["schemas"];
    let fields = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        fields(&est),
        fields(&schemas["EstimateAnswer"]["properties"])
    );
    assert_eq!(
        fields(&est["periods"][0]),
        fields(&schemas["EstimatePeriod"]["properties"])
    );
    let request = fields(&schemas["EstimateRequest"]["properties"]);
    assert_eq!(
        request,
        [
            "account",
            "class",
            "duration_seconds",
            "quantity",
            "region",
            "sku",
            "start"
        ]
    );
}
