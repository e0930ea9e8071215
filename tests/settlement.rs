//! Issue 24.2: a top-up pays invoices already issued, oldest first, as far as the wallet
//! goes (unless `--no-topup-settlement`), and `POST /v1/admin/invoices/{id}/settle` pays one
//! from the wallet on demand; both are `settlement` movements of the wallet. Through the
//! HTTP API, on both backends.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::sync::Arc;

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

async fn topup(t: &TestApp, account: &str, amount: &str, reference: &str) -> (StatusCode, Value) {
    t.admin(
        "POST",
        &format!("/v1/admin/accounts/{account}/topups"),
        json!({"amount":amount,"reference":reference}).to_string(),
    )
    .await
}

async fn settle(t: &TestApp, id: &str) -> (StatusCode, Value) {
    t.admin("POST", &format!("/v1/admin/invoices/{id}/settle"), "")
        .await
}

/// The same app, its store not settling invoices on top-ups (`--no-topup-settlement`).
fn without_topup_settlement(t: TestApp) -> TestApp {
    let TestApp {
        mut state,
        app,
        url,
    } = t;
    drop(app);
    let store = Arc::try_unwrap(state.store)
        .ok()
        .expect("the app's store has one owner");
    state.store = Arc::new(store.with_topup_settlement(false));
    TestApp {
        app: billing_api::router(state.clone()),
        state,
        url,
    }
}

/// November for each of `accounts`: 1.1 GPU-hours, 11.00 + 0.66 tax = 11.66, closed with
/// an empty wallet: each invoice owes 11.66. Answers the invoices in the order of `accounts`.
async fn november_owing_11_66(t: &TestApp, accounts: &[&str]) -> Vec<Value> {
    let events: Vec<String> = accounts.iter().map(|a| nov_usage(a)).collect();
    t.ingest(&events).await;
    let nov = t.close("2026-11").await;
    accounts
        .iter()
        .map(|a| {
            let inv = nov
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["account"] == *a)
                .unwrap()
                .clone();
            assert_eq!(
                (&inv["amount_due"], &inv["paid"], &inv["status"]),
                (&json!("11.66"), &json!("0.00"), &json!("issued")),
                "{inv}"
            );
            inv
        })
        .collect()
}

fn nov_usage(account: &str) -> String {
    usage(
        &format!("{account}-n1"),
        account,
        "L1",
        "2026-11-10T00:00:00Z",
        "2026-11-10T01:06:00Z",
    )
}

fn dec_usage() -> String {
    usage(
        "d1",
        "acme",
        "L2",
        "2026-12-05T00:00:00Z",
        "2026-12-05T02:00:00Z",
    )
}

fn kinds_and_amounts(wallet: &Value) -> Vec<(String, String)> {
    wallet["movements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap().to_string(),
                m["amount"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The issue's case: 11.66 owed with an empty wallet, then a top-up of 90.00: the invoice
/// is paid, the wallet keeps 78.34, and the settlement is in its list.
async fn a_top_up_pays_the_invoice_issued_before_it(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let inv = november_owing_11_66(&t, &["acme"]).await.remove(0);
    let id = inv["id"].as_str().unwrap();
    let (s, v) = topup(&t, "acme", "90.00", "wire-1").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        v["settled"],
        json!([{"invoice": id, "number": "INV-2026-000001", "amount": "11.66"}])
    );
    assert_eq!(v["balance"], "78.34", "{v}");
    // Paid, and never overdue: 40 days after issue it is still `paid`.
    let t = t.at(DEC_2_2026_MS + 40 * 86_400_000);
    let (_, got) = t.get(&format!("/v1/invoices/{id}"), &key).await;
    assert_eq!(
        (&got["status"], &got["paid"]),
        (&json!("paid"), &json!("11.66")),
        "{got}"
    );
    let (_, balance) = t.get("/v1/balance", &key).await;
    let w = &balance["wallet"];
    assert_eq!(
        (&w["balance"], &w["outstanding"]),
        (&json!("78.34"), &json!("0.00")),
        "{w}"
    );
    assert_eq!(
        kinds_and_amounts(w),
        [
            ("topup".to_string(), "90.00".to_string()),
            ("settlement".to_string(), "-11.66".to_string())
        ]
    );
    assert_eq!(w["movements"][1]["document_id"], json!(id), "{w}");
    // The payment is the invoice's, from the wallet.
    let payments = t.state.store.finance().payments(id).await.unwrap();
    assert_eq!(payments.len(), 1, "{payments:?}");
    assert_eq!(payments[0].method.as_str(), "wallet");
    // The same top-up again settles nothing more.
    let (s, v) = topup(&t, "acme", "90.00", "wire-1").await;
    assert_eq!((s, &v["settled"]), (StatusCode::OK, &json!([])), "{v}");
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
}
on_both!(a_top_up_pays_the_invoice_issued_before_it);

/// Two unpaid invoices (November 11.66, December 21.20): a top-up of 15.00 pays November
/// and 3.34 of December (still `issued`); the next top-up pays the rest of December.
async fn top_ups_pay_the_oldest_invoice_first(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let nov = november_owing_11_66(&t, &["acme"]).await.remove(0);
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[dec_usage()]).await;
    let dec = t.close("2026-12").await;
    assert_eq!(
        (&dec[0]["amount_due"], &dec[0]["status"]),
        (&json!("21.20"), &json!("issued"))
    );
    let (nov_id, dec_id) = (nov["id"].as_str().unwrap(), dec[0]["id"].as_str().unwrap());
    let (s, v) = topup(&t, "acme", "15.00", "wire-1").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        v["settled"],
        json!([
            {"invoice": nov_id, "number": "INV-2026-000001", "amount": "11.66"},
            {"invoice": dec_id, "number": "INV-2027-000001", "amount": "3.34"}
        ])
    );
    assert_eq!(v["balance"], "0.00");
    let (_, got) = t.get(&format!("/v1/invoices/{dec_id}"), &key).await;
    assert_eq!(
        (&got["status"], &got["paid"]),
        (&json!("issued"), &json!("3.34")),
        "a partial payment keeps the invoice issued: {got}"
    );
    let (_, got) = t.get(&format!("/v1/invoices/{nov_id}"), &key).await;
    assert_eq!(got["status"], "paid", "{got}");
    // The rest of December: 17.86 of 30.00.
    let (s, v) = topup(&t, "acme", "30.00", "wire-2").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        v["settled"],
        json!([{"invoice": dec_id, "number": "INV-2027-000001", "amount": "17.86"}])
    );
    assert_eq!(v["balance"], "12.14");
    let (_, got) = t.get(&format!("/v1/invoices/{dec_id}"), &key).await;
    assert_eq!(
        (&got["status"], &got["paid"]),
        (&json!("paid"), &json!("21.20"))
    );
    let (_, balance) = t.get("/v1/balance", &key).await;
    let w = &balance["wallet"];
    assert_eq!(
        (&w["balance"], &w["outstanding"]),
        (&json!("12.14"), &json!("0.00")),
        "{w}"
    );
    assert_eq!(
        kinds_and_amounts(w),
        [
            ("topup", "15.00"),
            ("settlement", "-11.66"),
            ("settlement", "-3.34"),
            ("topup", "30.00"),
            ("settlement", "-17.86"),
        ]
        .map(|(k, a)| (k.to_string(), a.to_string()))
    );
    // A refund settles nothing.
    let (s, v) = t
        .admin(
            "POST",
            "/v1/admin/accounts/acme/refunds",
            json!({"amount":"2.00","reference":"back-1"}).to_string(),
        )
        .await;
    assert_eq!((s, &v["settled"]), (StatusCode::CREATED, &json!([])), "{v}");
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    // Replayed from its commands into an empty database holding the same usage: the same
    // payments and wallet.
    let r = TestApp::fresh(db).await.at(JAN_2_2027_MS);
    r.ingest(&[nov_usage("acme"), dec_usage()]).await;
    for row in t.state.store.log().outbox_pending(1000).await.unwrap() {
        if row.topic == billing_store::Topics::default().commands {
            let c: billing_store::Command = serde_json::from_str(&row.payload).unwrap();
            r.state.store.log().apply_command(&c).await.unwrap();
        }
    }
    assert_eq!(money_rows(&r).await, money_rows(&t).await);
}
on_both!(top_ups_pay_the_oldest_invoice_first);

/// The wallet's movements, the payments, the wallets and the invoices' statuses as text.
async fn money_rows(t: &TestApp) -> Vec<String> {
    let mut out = Vec::new();
    for q in [
        "select kind || '|' || amount || '|' || reference || '|' || at_ms from wallet_movements order by seq",
        "select invoice_id || '|' || amount || '|' || method || '|' || reference from invoice_payments order by seq",
        "select account || '|' || balance || '|' || outstanding from wallets order by account",
        "select id || '|' || number || '|' || status from invoices order by id",
    ] {
        for row in billing_store::db::query(q)
            .fetch_all(t.state.store.pool())
            .await
            .unwrap()
        {
            out.push(row.get::<String, _>(0));
        }
    }
    assert!(!out.is_empty());
    out
}

/// With top-up settlement off, a top-up only credits the wallet; the settle route then pays
/// the invoice on demand, with its answers for everything else.
async fn with_settlement_off_a_top_up_only_credits_and_settle_pays_on_demand(db: Db) {
    let t = without_topup_settlement(TestApp::fresh(db).await);
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    t.account("beta").await;
    let mut nov = november_owing_11_66(&t, &["acme", "beta"]).await;
    let (inv, beta) = (nov.remove(0), nov.remove(0));
    let id = inv["id"].as_str().unwrap();
    let (s, v) = topup(&t, "acme", "90.00", "wire-1").await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        (&v["settled"], &v["balance"]),
        (&json!([]), &json!("90.00"))
    );
    let (_, got) = t.get(&format!("/v1/invoices/{id}"), &key).await;
    assert_eq!(
        (&got["status"], &got["paid"]),
        (&json!("issued"), &json!("0.00"))
    );
    // Only the admin settles; unknown invoices are 404.
    let (s, _) = t
        .call(
            "POST",
            &format!("/v1/admin/invoices/{id}/settle"),
            Some(&key),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = settle(&t, "inv_nope").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v["message"].as_str().unwrap().contains("inv_nope"), "{v}");
    // Beta's wallet is empty: 409 naming it.
    let (s, v) = settle(&t, beta["id"].as_str().unwrap()).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("nothing to pay"),
        "{v}"
    );
    // Acme's: paid from the wallet.
    let (s, v) = settle(&t, id).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        (&v["payment"]["amount"], &v["payment"]["method"]),
        (&json!("11.66"), &json!("wallet"))
    );
    assert_eq!(
        (&v["movement"]["kind"], &v["movement"]["amount"]),
        (&json!("settlement"), &json!("-11.66"))
    );
    assert_eq!(v["balance"], "78.34");
    assert_eq!(
        (&v["invoice"]["status"], &v["invoice"]["paid"]),
        (&json!("paid"), &json!("11.66"))
    );
    // Paid already: 409.
    let (s, v) = settle(&t, id).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("paid already"),
        "{v}"
    );
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(
        kinds_and_amounts(&balance["wallet"]),
        [
            ("topup".to_string(), "90.00".to_string()),
            ("settlement".to_string(), "-11.66".to_string())
        ]
    );
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    // A replay by an engine with settlement on repeats what the commands say: the top-up
    // settled nothing, the settle command paid.
    let r = TestApp::fresh(db).await;
    r.ingest(&[nov_usage("acme"), nov_usage("beta")]).await;
    for row in t.state.store.log().outbox_pending(1000).await.unwrap() {
        if row.topic == billing_store::Topics::default().commands {
            let c: billing_store::Command = serde_json::from_str(&row.payload).unwrap();
            r.state.store.log().apply_command(&c).await.unwrap();
        }
    }
    assert_eq!(money_rows(&r).await, money_rows(&t).await);
}
on_both!(with_settlement_off_a_top_up_only_credits_and_settle_pays_on_demand);

/// A credit note is not payable (422); the money it credited pays the older invoice in part
/// on demand.
async fn a_credit_note_is_not_settled_and_its_money_pays_an_older_invoice(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    // November: 240 GPU-hours, 2,544.00, unpaid. December: 10.60, and L1 was stopped all
    // along: November's -2,544.00 leaves a credit note of 2,533.40 in the wallet.
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
    t.ingest(&days).await;
    let nov = t.close("2026-11").await;
    let nov_id = nov[0]["id"].as_str().unwrap().to_string();
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[
        usage("d1", "acme", "L3", "2026-12-05T00:00:00Z", "2026-12-05T01:00:00Z"),
        json!({"specversion":"1.0","id":"s1","source":"ctl/1","type":"lease.state","subject":"acme",
               "data":{"lease":"L1","state":"stopped","at":"2026-11-01T00:00:00Z"}})
        .to_string(),
    ])
    .await;
    let dec = t.close("2026-12").await;
    let cn = dec[0]["credit_note"].as_str().unwrap().to_string();
    let (s, v) = settle(&t, &cn).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("credit note"),
        "{v}"
    );
    let (s, v) = settle(&t, &nov_id).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["payment"]["amount"], "2533.40");
    assert_eq!(v["balance"], "0.00");
    assert_eq!(
        (&v["invoice"]["status"], &v["invoice"]["paid"]),
        (&json!("overdue"), &json!("2533.40"))
    );
    let (_, balance) = t.get("/v1/balance", &key).await;
    assert_eq!(balance["wallet"]["outstanding"], "10.60", "{balance}");
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
}
on_both!(a_credit_note_is_not_settled_and_its_money_pays_an_older_invoice);
