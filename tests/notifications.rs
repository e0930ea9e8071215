//! Issue 28: budgets, balance alerts and the arrears sequence, evaluated in the transaction
//! of the batch or command that moved them; each notice written once (its dedupe key), with
//! the account's next sequence number, on `GET /v1/notifications`, and the quota decisions
//! they make due on the decision stream. On SQLite and PostgreSQL.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};

/// 36 CNY an hour: one unit for 100 s is exactly 1.00.
const BOOK: &str =
    "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n";

/// 2026-12-01T00:00:00Z: the open period (the tests' clock is 2 December).
const DEC_1: i64 = 1_796_083_200;

/// `seconds` of one unit of `account`, from `DEC_1 + offset`: `seconds / 100` CNY.
fn usage(id: &str, account: &str, offset: i64, seconds: i64) -> String {
    json!({"specversion": "1.0", "id": id, "source": "node/1", "type": "gpu.usage", "subject": account,
        "data": {"lease": format!("L-{id}"), "resource": "gpu0", "sku": "gpu.h100",
            "start": rfc(DEC_1 + offset), "end": rfc(DEC_1 + offset + seconds)}})
    .to_string()
}

async fn notifications(t: &TestApp, account: &str) -> Vec<Value> {
    let (s, v) = t
        .admin(
            "GET",
            &format!("/v1/notifications?account={account}"),
            String::new(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v["notifications"].as_array().unwrap().clone()
}

/// (type, seq) of each notification.
fn kinds(ns: &[Value]) -> Vec<(String, i64)> {
    ns.iter()
        .map(|n| {
            (
                n["type"].as_str().unwrap().to_string(),
                n["seq"].as_i64().unwrap(),
            )
        })
        .collect()
}

async fn decisions(t: &TestApp, account: &str) -> Vec<Value> {
    let (s, v) = t
        .admin(
            "GET",
            &format!("/v1/quota/decisions?account={account}"),
            String::new(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v["decisions"].as_array().unwrap().clone()
}

async fn authorize(t: &TestApp, account: &str) -> Value {
    let (s, v) = t
        .call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            json!({"account": account, "sku": "gpu.h100", "quantity": "1", "seconds": 100})
                .to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

/// Worked numbers: a budget of 10.00 with thresholds 50/80/100% and `action = stop`. Usage
/// of 4.00 crosses nothing; 6.00 crosses 50% (5.00); 9.00 crosses 80% (8.00); 10.00 crosses
/// 100% and makes a `limit` decision on quota `budget:b1`: the next authorization is denied
/// naming it. The same events delivered again (a redelivery, a replay) add no notice:
/// exactly three, seq 1, 2, 3, in order.
async fn a_budget_alerts_once_per_crossing_and_stops_at_100(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/acme/budgets/b1",
            Some(&key),
            "application/json",
            json!({"amount": "10", "thresholds": ["50", "80", "100"], "action": "stop"})
                .to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let events = [
        usage("e1", "acme", 0, 400),
        usage("e2", "acme", 1000, 200),
        usage("e3", "acme", 2000, 300),
        usage("e4", "acme", 3000, 100),
    ];
    t.ingest(&events[..1]).await;
    assert!(notifications(&t, "acme").await.is_empty());
    for e in &events[1..] {
        t.ingest(std::slice::from_ref(e)).await;
    }
    // Redelivered, all at once.
    t.ingest(&events).await;
    let ns = notifications(&t, "acme").await;
    assert_eq!(
        kinds(&ns),
        [
            ("budget.crossed".to_string(), 1),
            ("budget.crossed".to_string(), 2),
            ("budget.crossed".to_string(), 3)
        ]
    );
    let thresholds: Vec<&str> = ns
        .iter()
        .map(|n| n["body"]["data"]["threshold_percent"].as_str().unwrap())
        .collect();
    assert_eq!(thresholds, ["50", "80", "100"]);
    assert_eq!(ns[2]["body"]["data"]["cost"], "10.00");
    assert_eq!(ns[2]["body"]["data"]["decision"], "limit");
    assert_eq!(ns[2]["body"]["seq"], 3);
    // The decision on the stream.
    let ds = decisions(&t, "acme").await;
    let limit: Vec<&Value> = ds.iter().filter(|d| d["quota"] == "budget:b1").collect();
    assert_eq!(limit.len(), 1, "{ds:?}");
    assert_eq!(limit[0]["kind"], "limit");
    assert_eq!(limit[0]["used"], "10");
    // Authorization refused, naming the budget.
    let v = authorize(&t, "acme").await;
    assert_eq!(v["decision"], "denied", "{v}");
    assert_eq!(v["quota"], "budget:b1", "{v}");
    // The customer sees its own notifications and settings.
    let (s, v) = t.get("/v1/notifications", &key).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["notifications"].as_array().unwrap().len(), 3);
    let (s, v) = t.get("/v1/accounts/acme/notify", &key).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["settings"]["budgets"]["b1"]["amount"], "10");
    let budget_state = v["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subject"] == "budget:b1")
        .unwrap();
    assert_eq!(budget_state["block"]["node"], "acme");
}
on_both!(a_budget_alerts_once_per_crossing_and_stops_at_100);

/// Accounts `ids`, each a member of `corp` that `corp` pays for.
async fn members_of_corp(t: &TestApp, ids: &[&str]) {
    for id in ids {
        let (s, v) = t
            .admin(
                "POST",
                "/v1/admin/accounts",
                json!({"id": id, "parent": "corp", "pays": "parent"}).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
}

/// A node's budget (issue 27's tree): `corp` pays for `a` and `b`; a budget of corp on its
/// node crosses 100% from its children's usage together (6.00 + 5.00 of 10.00), and stops
/// both children.
async fn a_node_budget_counts_the_subtree_and_stops_every_child(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let corp = t.account("corp").await;
    members_of_corp(&t, &["a", "b"]).await;
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/corp/budgets/org",
            Some(&corp),
            "application/json",
            json!({"amount": "10", "thresholds": ["100"], "scope": {"node": "corp"}, "action": "stop"})
                .to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t.ingest(&[usage("a1", "a", 0, 600)]).await;
    assert!(notifications(&t, "corp").await.is_empty());
    t.ingest(&[usage("b1", "b", 100, 500)]).await;
    let ns = notifications(&t, "corp").await;
    assert_eq!(kinds(&ns), [("budget.crossed".to_string(), 1)]);
    assert_eq!(ns[0]["body"]["data"]["cost"], "11.00");
    for child in ["a", "b"] {
        let v = authorize(&t, child).await;
        assert_eq!(v["decision"], "denied", "{child}: {v}");
        assert_eq!(v["node"], "corp", "{v}");
    }
    // A scope outside the key's subtree is refused.
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/a/budgets/x",
            Some(&corp),
            "application/json",
            json!({"amount": "10", "thresholds": ["100"], "scope": {"node": "corp"}}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
}
on_both!(a_node_budget_counts_the_subtree_and_stops_every_child);

/// The arrears sequence with a test clock. `acme` prepaid 5.00 uses 6.00: in arrears at the
/// batch's last second (DEC_1 + 600); after the grace (1 h) a tick stops it (`stop` on quota
/// `arrears`, authorization denied); after 2 days stopped it would be released, but a top-up
/// of 10.00 on 2 December clears it (`clear`), and a later tick releases nothing. `beta`
/// prepaid 1.00 uses 2.00 and is never topped up: stopped after its grace, released an hour
/// later. Each step once, also when ticked again.
async fn arrears_stop_release_and_a_top_up_that_clears(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    for (account, prepaid, release) in [("acme", "5", 172_800), ("beta", "1", 3600)] {
        t.account(account).await;
        let (s, v) = t
            .admin(
                "PUT",
                &format!("/v1/admin/accounts/{account}/quotas"),
                json!({"prepaid_balance": prepaid}).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let (s, v) = t
            .admin(
                "PUT",
                &format!("/v1/admin/accounts/{account}/arrears"),
                json!({"grace_seconds": 3600, "release_after_seconds": release}).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    // beta's steps also go to a webhook endpoint of beta's (never attempted here: no worker).
    let (s, ep) = t
        .admin(
            "POST",
            "/v1/accounts/beta/webhooks",
            json!({"url": "https://93.184.215.14/hook", "event_types": ["arrears.started", "arrears.stopped", "arrears.released", "arrears.cleared"]}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{ep}");
    let ep = ep["id"].as_str().unwrap().to_string();
    t.ingest(&[usage("u1", "acme", 0, 600), usage("u2", "beta", 0, 200)])
        .await;
    assert_eq!(
        kinds(&notifications(&t, "acme").await),
        [("arrears.started".to_string(), 1)]
    );
    let notify = t.state.store.notify();
    // Before the grace ends: nothing more.
    notify.tick((DEC_1 + 3000) * 1000).await.unwrap();
    assert_eq!(notifications(&t, "acme").await.len(), 1);
    // The grace ended at DEC_1 + 599 + 3600 (acme), DEC_1 + 199 + 3600 (beta).
    for _ in 0..2 {
        notify.tick((DEC_1 + 5000) * 1000).await.unwrap();
    }
    let ns = notifications(&t, "acme").await;
    assert_eq!(
        kinds(&ns),
        [
            ("arrears.started".to_string(), 1),
            ("arrears.stopped".to_string(), 2)
        ]
    );
    assert_eq!(ns[1]["body"]["timestamp"], rfc(DEC_1 + 4199));
    let v = authorize(&t, "acme").await;
    assert_eq!(v["decision"], "denied", "{v}");
    // beta's release is due at DEC_1 + 3799 + 3600.
    notify.tick((DEC_1 + 8000) * 1000).await.unwrap();
    assert_eq!(
        kinds(&notifications(&t, "beta").await),
        [
            ("arrears.started".to_string(), 1),
            ("arrears.stopped".to_string(), 2),
            ("arrears.released".to_string(), 3)
        ]
    );
    let steps: Vec<(String, String)> = decisions(&t, "beta")
        .await
        .iter()
        .filter(|d| d["quota"] == "arrears")
        .map(|d| {
            (
                d["kind"].as_str().unwrap().into(),
                d["quota"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("stop".to_string(), "arrears".to_string()),
            ("release".to_string(), "arrears".to_string())
        ]
    );
    let (s, v) = t
        .admin(
            "GET",
            &format!("/v1/accounts/beta/webhooks/{ep}/deliveries"),
            String::new(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let mut queued: Vec<(i64, String)> = v["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["seq"].as_i64().unwrap(),
                d["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    queued.sort();
    assert_eq!(
        queued,
        [
            (1, "arrears.started".to_string()),
            (2, "arrears.stopped".to_string()),
            (3, "arrears.released".to_string())
        ]
    );
    // The top-up (the app's clock: 2 December) clears acme before its release.
    let (s, v) = t
        .admin(
            "POST",
            "/v1/admin/accounts/acme/topups",
            json!({"amount": "10", "reference": "t1"}).to_string(),
        )
        .await;
    assert!(s.is_success(), "{v}");
    notify.tick((DEC_1 + 5 * 86_400) * 1000).await.unwrap();
    let ns = notifications(&t, "acme").await;
    assert_eq!(
        kinds(&ns),
        [
            ("arrears.started".to_string(), 1),
            ("arrears.stopped".to_string(), 2),
            ("arrears.cleared".to_string(), 3)
        ]
    );
    assert_eq!(ns[2]["body"]["data"]["decision"], "clear");
    let v = authorize(&t, "acme").await;
    assert_eq!(v["decision"], "allowed", "{v}");
    let (s, v) = t
        .admin("GET", "/v1/accounts/beta/notify", String::new())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["arrears"]["phase"], "released", "{v}");
}
on_both!(arrears_stop_release_and_a_top_up_that_clears);

/// Bad input gets a 4xx naming what is wrong; another tenant's key sees nothing.
async fn bad_settings_are_refused_by_name(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let other = t.account("zeta").await;
    for (body, says) in [
        (
            json!({"amount": "10", "thresholds": ["0"]}),
            "thresholds[0]",
        ),
        (
            json!({"amount": "10", "thresholds": ["1001"]}),
            "thresholds[0]",
        ),
        (json!({"amount": "10", "thresholds": []}), "thresholds"),
        (json!({"amount": "-1", "thresholds": ["50"]}), "amount"),
        (
            json!({"amount": "10", "thresholds": ["50"], "action": "stop"}),
            "action",
        ),
    ] {
        let (s, v) = t
            .call(
                "PUT",
                "/v1/accounts/acme/budgets/b1",
                Some(&key),
                "application/json",
                body.to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {v}");
        assert!(v.to_string().contains(says), "{body}: {v}");
    }
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/acme/budgets/b1",
            Some(&key),
            "application/json",
            json!({"amount": "10", "thresholds": ["50"], "colour": "red"}).to_string(),
        )
        .await;
    assert!(s.is_client_error(), "{v}");
    assert!(v.to_string().contains("colour"), "{v}");
    let (s, v) = t
        .call(
            "DELETE",
            "/v1/accounts/acme/budgets/nope",
            Some(&key),
            "application/json",
            String::new(),
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v.to_string().contains("no budget"), "{v}");
    let (s, _) = t.get("/v1/accounts/acme/notify", &other).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/arrears",
            json!({"grace_seconds": -1, "release_after_seconds": 0}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v.to_string().contains("grace_secs"), "{v}");
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/acme/alerts",
            Some(&key),
            "application/json",
            json!({"balance": {"low_amount": "-5"}}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v.to_string().contains("balance."), "{v}");
}
on_both!(bad_settings_are_refused_by_name);

/// The README's notifications section shows every event type with the body the core makes
/// for its example (`billing_core::notify::example`), so the documented payloads cannot drift.
#[test]
fn the_readme_shows_every_event_type_with_its_example_body() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    for kind in billing_core::notify::NoticeKind::ALL {
        let mut n = billing_core::notify::example(kind);
        n.seq = Some(7);
        let body = serde_json::to_string(&n.envelope()).unwrap();
        assert!(
            readme.contains(&format!(
                "- `{}`:\n  ```json\n  {body}\n  ```",
                kind.as_str()
            )),
            "README lacks the example of {kind}: {body}"
        );
    }
}

/// A low prepaid balance by amount, with its resolution: acme prepays 10.00 and is told when
/// what it can still spend falls below 5.00 (6.00 used: 4.00 left), once; a top-up of 10.00
/// (14.00 left, over the 5.50 of the 10 % hysteresis) resolves it.
async fn a_low_balance_is_told_once_and_resolved_by_a_top_up(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            json!({"prepaid_balance": "10"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/acme/alerts",
            Some(&key),
            "application/json",
            json!({"balance": {"low_amount": "5"}}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t.ingest(&[usage("u1", "acme", 0, 400)]).await;
    assert!(notifications(&t, "acme").await.is_empty());
    t.ingest(&[usage("u2", "acme", 1000, 200)]).await;
    t.ingest(&[usage("u2", "acme", 1000, 200)]).await;
    let ns = notifications(&t, "acme").await;
    assert_eq!(kinds(&ns), [("balance.low".to_string(), 1)]);
    assert_eq!(ns[0]["body"]["data"]["balance"], "4.00");
    assert_eq!(ns[0]["body"]["data"]["condition"], "amount");
    let (s, v) = t
        .admin(
            "POST",
            "/v1/admin/accounts/acme/topups",
            json!({"amount": "10", "reference": "t1"}).to_string(),
        )
        .await;
    assert!(s.is_success(), "{v}");
    let ns = notifications(&t, "acme").await;
    assert_eq!(
        kinds(&ns),
        [
            ("balance.low".to_string(), 1),
            ("balance.resolved".to_string(), 2)
        ]
    );
    assert_eq!(ns[1]["body"]["data"]["balance"], "14.00");
}
on_both!(a_low_balance_is_told_once_and_resolved_by_a_top_up);

/// Expiry reminders with a test clock: a package ending 2026-12-10T00:00Z is reminded in its
/// 7-day window (ticked on the 5th, twice: once), its 3-day window (the 8th) and its 1-day
/// window (the 9th at noon); an auto-renewing monthly plan of 300.00 renewing on 2027-01-01
/// is announced 7 days before, saying the empty wallet does not cover it.
async fn reminders_come_once_per_window(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/terms/packages/pk1",
            r#"{"sku":"gpu.h100","hours":"10","from":"2026-12-01T00:00:00Z","to":"2026-12-10T00:00:00Z","price":"0"}"#,
        )
        .await;
    assert!(s.is_success(), "{v}");
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/terms/subscriptions/plan-m",
            r#"{"sku":"gpu.h100","quantity":"1","cycle":"month","start":"2026-12-01T00:00:00Z","auto_renew":true,"price":"300.00"}"#,
        )
        .await;
    assert!(s.is_success(), "{v}");
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/acme/alerts",
            Some(&key),
            "application/json",
            json!({"reminders": {"days": [7, 3, 1]}}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let notify = t.state.store.notify();
    let day = |d: i64, h: i64| (DEC_1 + (d - 1) * 86_400 + h * 3600) * 1000;
    for at in [day(5, 0), day(5, 1), day(8, 0), day(9, 12), day(9, 13)] {
        notify.tick(at).await.unwrap();
    }
    let ns = notifications(&t, "acme").await;
    let windows: Vec<(String, i64)> = ns
        .iter()
        .filter(|n| n["type"] == "term.expiring")
        .map(|n| {
            (
                n["body"]["data"]["id"].as_str().unwrap().to_string(),
                n["body"]["data"]["window_days"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        windows,
        [
            ("pk1".to_string(), 7),
            ("pk1".to_string(), 3),
            ("pk1".to_string(), 1)
        ]
    );
    // The plan renews on 2027-01-01: its 7-day window opens on 2026-12-25.
    notify.tick(day(25, 1)).await.unwrap();
    let ns = notifications(&t, "acme").await;
    let renewing: Vec<&Value> = ns
        .iter()
        .filter(|n| n["type"] == "subscription.renewing")
        .collect();
    assert_eq!(renewing.len(), 1, "{ns:?}");
    assert_eq!(renewing[0]["body"]["data"]["price"], "300.00");
    assert_eq!(renewing[0]["body"]["data"]["wallet_covers"], false);
    let seqs: Vec<i64> = ns.iter().map(|n| n["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=ns.len() as i64).collect::<Vec<_>>());
}
on_both!(reminders_come_once_per_window);

/// A budget on a project tag (section 18's allocation): `corp` pays for `ml` and `web` and
/// allocates by `project`; its budget of 100.00 on project p-x counts only what is allocated to
/// p-x in its subtree: ml's 2 h on p-x (72.00) cross 50 %, web's 2 h on p-y change nothing,
/// ml's third hour (108.00) crosses 100 %. A tag other than the book's allocation tag is
/// refused by name.
async fn a_tag_budget_counts_the_cost_allocated_to_its_value(db: Db) {
    const TAGGED: &str = "currency = \"CNY\"\ntimezone = \"UTC\"\nallocation_tag = \"project\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n";
    let t = TestApp::fresh(db).await;
    t.put_pricebook(TAGGED).await;
    let corp = t.account("corp").await;
    members_of_corp(&t, &["ml", "web"]).await;
    let budget = |tag: &str| {
        json!({"amount": "100", "thresholds": ["50", "100"], "scope": {"tag": tag, "value": "p-x"}})
            .to_string()
    };
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/corp/budgets/px",
            Some(&corp),
            "application/json",
            budget("team"),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v.to_string().contains("allocation_tag"), "{v}");
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/corp/budgets/px",
            Some(&corp),
            "application/json",
            budget("project"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let tags = |id: &str, account: &str, lease: &str, project: &str| {
        json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.tags",
            "subject":account,"data":{"lease":lease,"tags":{"project":project},"at":rfc(DEC_1)}})
        .to_string()
    };
    let run = |id: &str, account: &str, lease: &str, offset: i64, hours: i64| {
        json!({"specversion": "1.0", "id": id, "source": "node/1", "type": "gpu.usage", "subject": account,
            "data": {"lease": lease, "resource": "gpu0", "sku": "gpu.h100",
                "start": rfc(DEC_1 + offset), "end": rfc(DEC_1 + offset + hours * 3600)}})
        .to_string()
    };
    t.ingest(&[
        tags("t1", "ml", "L1", "p-x"),
        tags("t2", "web", "L2", "p-y"),
    ])
    .await;
    t.ingest(&[run("u1", "ml", "L1", 0, 2)]).await;
    t.ingest(&[run("u2", "web", "L2", 0, 2)]).await;
    t.ingest(&[run("u3", "ml", "L1", 7200, 1)]).await;
    let ns = notifications(&t, "corp").await;
    let got: Vec<(String, String)> = ns
        .iter()
        .map(|n| {
            (
                n["body"]["data"]["threshold_percent"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                n["body"]["data"]["cost"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("50".to_string(), "72.00".to_string()),
            ("100".to_string(), "108.00".to_string())
        ]
    );
}
on_both!(a_tag_budget_counts_the_cost_allocated_to_its_value);
