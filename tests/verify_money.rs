//! Issue 24.3: `gpubill verify` checks every stored money figure a later one is computed from:
//! invoice columns and statuses, gapless numbering, wallets, movements and payments. Each
//! tampering the issue lists is found and named; an untampered workload with top-ups and
//! settlements passes. On both backends.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};

/// 5.00 of credit for acme: its November invoice consumes it (`invoices.credit` non-zero).
const BOOK: &str = r#"currency = "CNY"
timezone = "UTC"

[skus."gpu"]
rate_per_hour = "10.00"

[tax]
rate = "0.06"

[[credits]]
account = "acme"
amount = "5.00"
"#;

fn usage(id: &str, account: &str, start: &str, end: &str) -> String {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
           "data":{"lease":"L1","resource":"g0","sku":"gpu","start":start,"end":end}})
    .to_string()
}

async fn topup(t: &TestApp, account: &str, amount: &str, reference: &str) -> Value {
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/admin/accounts/{account}/topups"),
            json!({"amount":amount,"reference":reference}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v
}

/// November for acme (credit used, paid by a later top-up) and beta (paid in part by a
/// top-up), December for acme (paid from the wallet at issue).
async fn workload(db: Db) -> TestApp {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("acme").await;
    t.account("beta").await;
    t.ingest(&[
        usage("a1", "acme", "2026-11-10T00:00:00Z", "2026-11-10T02:00:00Z"),
        usage("b1", "beta", "2026-11-10T00:00:00Z", "2026-11-10T02:00:00Z"),
    ])
    .await;
    let nov = t.close("2026-11").await;
    assert_eq!(nov[0]["credit"], "5.00", "{nov}");
    assert_eq!(nov[0]["number"], "INV-2026-000001");
    assert_eq!(nov[1]["number"], "INV-2026-000002");
    let v = topup(&t, "acme", "90.00", "wire-1").await;
    assert_eq!(v["settled"].as_array().unwrap().len(), 1, "{v}");
    let v = topup(&t, "beta", "10.00", "wire-2").await;
    assert_eq!(v["settled"][0]["amount"], "10.00", "{v}");
    let t = t.at(JAN_2_2027_MS);
    t.ingest(&[usage(
        "a2",
        "acme",
        "2026-12-05T00:00:00Z",
        "2026-12-05T01:00:00Z",
    )])
    .await;
    let dec = t.close("2026-12").await;
    assert_eq!(dec[0]["status"], "paid", "{dec}");
    t
}

async fn tamper(t: &TestApp, sql: &str) {
    let done = billing_store::db::query(sql)
        .execute(t.state.store.pool())
        .await
        .unwrap();
    assert!(done.rows_affected() >= 1, "{sql}");
}

async fn id_of(t: &TestApp, account: &str, period: &str) -> String {
    billing_store::db::query(&format!(
        "select id from invoices where account = '{account}' and period = '{period}'"
    ))
    .fetch_one(t.state.store.pool())
    .await
    .unwrap()
    .get(0)
}

/// Verify finds a difference of `kind` about `what` whose detail contains `detail`.
async fn finds(t: &TestApp, kind: &str, what: &str, detail: &str) {
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(
        report
            .differences
            .iter()
            .any(|d| d.kind.as_str() == kind && d.what == what && d.detail.contains(detail)),
        "no {kind} difference about {what} saying {detail:?}: {:#?}",
        report.differences
    );
}

async fn an_untampered_workload_with_top_ups_and_settlements_passes(db: Db) {
    let t = workload(db).await;
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    assert_eq!((report.invoices, report.wallets), (4, 2), "{report:?}");
}
on_both!(an_untampered_workload_with_top_ups_and_settlements_passes);

async fn a_zeroed_invoice_credit_is_found(db: Db) {
    let t = workload(db).await;
    let id = id_of(&t, "acme", "2026-11").await;
    tamper(
        &t,
        &format!("update invoices set credit = '0.00' where id = '{id}'"),
    )
    .await;
    finds(&t, "invoice_field", &id, "credit: stored 0.00").await;
}
on_both!(a_zeroed_invoice_credit_is_found);

async fn a_deleted_issued_invoice_leaves_a_gap(db: Db) {
    let t = workload(db).await;
    let id = id_of(&t, "beta", "2026-11").await;
    tamper(&t, &format!("delete from invoices where id = '{id}'")).await;
    finds(&t, "numbering", "INV-2026-000002", "a gap").await;
    finds(&t, "payments", &id, "not stored").await;
}
on_both!(a_deleted_issued_invoice_leaves_a_gap);

async fn a_changed_number_is_found(db: Db) {
    let t = workload(db).await;
    let id = id_of(&t, "acme", "2026-11").await;
    tamper(
        &t,
        &format!("update invoices set number = 'INV-2026-000009' where id = '{id}'"),
    )
    .await;
    finds(&t, "numbering", "INV-2026-000001", "a gap").await;
    finds(&t, "numbering", &id, "stored INV-2026-000009, beyond").await;
}
on_both!(a_changed_number_is_found);

async fn a_changed_status_is_found(db: Db) {
    let t = workload(db).await;
    // Beta paid 10.00 of 21.20: `issued`.
    let id = id_of(&t, "beta", "2026-11").await;
    tamper(
        &t,
        &format!("update invoices set status = 'paid' where id = '{id}'"),
    )
    .await;
    finds(
        &t,
        "invoice_field",
        &id,
        "status: stored \"paid\", expected \"issued\"",
    )
    .await;
}
on_both!(a_changed_status_is_found);

async fn a_changed_wallet_balance_is_found(db: Db) {
    let t = workload(db).await;
    tamper(
        &t,
        "update wallets set balance = '1000.00' where account = 'acme'",
    )
    .await;
    finds(&t, "wallet", "balance", "balance: stored 1000.00").await;
}
on_both!(a_changed_wallet_balance_is_found);

async fn a_deleted_movement_is_found(db: Db) {
    let t = workload(db).await;
    tamper(
        &t,
        "delete from wallet_movements where account = 'acme' and kind = 'topup'",
    )
    .await;
    finds(&t, "wallet", "balance", "its movements add up to").await;
    // A deleted settlement no longer matches its invoice's payment.
    let t = workload(db).await;
    let id = id_of(&t, "beta", "2026-11").await;
    tamper(
        &t,
        &format!("delete from wallet_movements where kind = 'settlement' and document_id = '{id}'"),
    )
    .await;
    finds(&t, "payments", &id, "settlement movements to 0").await;
}
on_both!(a_deleted_movement_is_found);

async fn a_changed_payment_is_found(db: Db) {
    let t = workload(db).await;
    let id = id_of(&t, "beta", "2026-11").await;
    tamper(
        &t,
        &format!("update invoice_payments set amount = '1.00' where invoice_id = '{id}'"),
    )
    .await;
    finds(&t, "payments", &id, "payments add up to 1.00").await;
    finds(&t, "wallet", "outstanding", "outstanding: stored 11.20").await;
}
on_both!(a_changed_payment_is_found);
