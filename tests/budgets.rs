//! Issue 27, budgets per node: a `spend_limit` of an account with sub-accounts bounds its
//! whole subtree. `POST /v1/authorize` checks the account's limits and every ancestor's,
//! under concurrency, and a denial names the node whose limit fired; a batch that moves a
//! child's cost moves its ancestors' quota decisions, which name the node. On SQLite and
//! PostgreSQL.
//!
//! The tree of every test: `corp` pays for `a` and `b` (`pays = "parent"`), and for `a1`
//! under `a`; `c` is under `corp` and pays for itself; `solo` stands alone. Set over the API (`POST
//! /v1/admin/accounts` with `parent` and `pays`: `accounts` terms, commands).

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::sync::Arc;

/// 36 CNY an hour: one unit for 100 s is exactly 1.00.
const BOOK: &str =
    "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n";

/// 2026-12-01T00:00:00Z: the open period (the tests' clock is 2 December).
const DEC_1: i64 = 1_796_083_200;

/// The tree, with `corp`'s quotas.
async fn tree(db: Db, corp_quotas: Value) -> TestApp {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    t.account("corp").await;
    for (id, body) in [
        ("a", json!({"id": "a", "parent": "corp", "pays": "parent"})),
        ("b", json!({"id": "b", "parent": "corp", "pays": "parent"})),
        ("c", json!({"id": "c", "parent": "corp", "pays": "self"})),
        ("a1", json!({"id": "a1", "parent": "a", "pays": "parent"})),
    ] {
        let (s, v) = t
            .admin("POST", "/v1/admin/accounts", body.to_string())
            .await;
        assert_eq!(s, StatusCode::CREATED, "{id}: {v}");
    }
    t.account("solo").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/corp/quotas",
            corp_quotas.to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t
}

/// `seconds` of one unit of `account`, from `DEC_1 + offset`: `seconds / 100` CNY.
fn usage(id: &str, account: &str, offset: i64, seconds: i64) -> String {
    json!({"specversion": "1.0", "id": id, "source": "node/1", "type": "gpu.usage", "subject": account,
        "data": {"lease": format!("L-{id}"), "resource": "gpu0", "sku": "gpu.h100",
            "start": rfc(DEC_1 + offset), "end": rfc(DEC_1 + offset + seconds)}})
    .to_string()
}

async fn authorize(t: &TestApp, account: &str, seconds: i64) -> Value {
    let (s, v) = t
        .call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            json!({"account": account, "sku": "gpu.h100", "quantity": "1", "seconds": seconds, "ttl_seconds": 600})
                .to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

/// Worked numbers: a 40.00, a1 2.00, b 28.00 (on corp's invoice: 70.00, corp's own usage
/// nothing), c 25.00 (its own invoice), solo 50.00 (not corp's): corp's subtree spends 95.00
/// of its 100.00. The next authorization of c for 10.00 is denied naming corp (used 95.00).
/// With a's limit at 45.00, a middle node paid for by corp (its subtree: its part of corp's
/// invoice and a1's, 42.00), a1's 4.00 is denied naming a, its 3.00 fits; then c's 2.00
/// fills corp exactly, and b's 1.00 is denied naming corp (used 100.00). solo, outside the
/// tree, is not concerned. corp itself is a node; a child's own limit names the child.
async fn a_child_is_denied_past_its_parents_limit(db: Db) {
    let t = tree(db, json!({"spend_limit": "100.00"})).await;
    t.ingest(&[
        usage("u1", "a", 0, 4000),
        usage("u2", "b", 3600, 2800),
        usage("u3", "c", 7200, 2500),
        usage("u4", "solo", 0, 5000),
        usage("u5", "a1", 10_000, 200),
    ])
    .await;
    let (_, corp) = t.admin("GET", "/v1/balance?account=corp", "").await;
    assert_eq!(corp["period_cost"], "70.00", "corp's own invoice: {corp}");

    let v = authorize(&t, "c", 1000).await;
    assert_eq!(
        (&v["decision"], &v["node"], &v["quota"]),
        (&json!("denied"), &json!("corp"), &json!("spend_limit")),
        "{v}"
    );
    assert_eq!(
        (&v["used"], &v["requested"], &v["limit"]),
        (&json!("95.00"), &json!("10.00"), &json!("100.00")),
        "{v}"
    );
    // A middle node's budget: a's subtree is a and a1, whose payer (corp) is above it.
    let (s, _) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/a/quotas",
            json!({"spend_limit": "45.00"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let v = authorize(&t, "a1", 400).await;
    assert_eq!(
        (&v["decision"], &v["node"], &v["used"], &v["limit"]),
        (
            &json!("denied"),
            &json!("a"),
            &json!("42.00"),
            &json!("45.00")
        ),
        "{v}"
    );
    assert_eq!(authorize(&t, "a1", 300).await["decision"], "allowed");
    let v = authorize(&t, "c", 200).await;
    assert_eq!(v["decision"], "allowed", "{v}");
    assert_eq!(v["amount"], "2.00", "{v}");
    let v = authorize(&t, "b", 100).await;
    assert_eq!(
        (&v["decision"], &v["node"], &v["used"]),
        (&json!("denied"), &json!("corp"), &json!("100.00")),
        "{v}"
    );
    // Outside the tree: no budget but its own (none).
    assert_eq!(authorize(&t, "solo", 100_000).await["decision"], "allowed");
    // corp itself is a node: its own holds count against the same budget.
    let v = authorize(&t, "corp", 100).await;
    assert_eq!(
        (&v["decision"], &v["node"]),
        (&json!("denied"), &json!("corp")),
        "{v}"
    );
    // A child's own limit fires first and names the child.
    let (s, _) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/b/quotas",
            json!({"spend_limit": "29.00"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let v = authorize(&t, "b", 200).await;
    assert_eq!(
        (&v["decision"], &v["node"], &v["limit"]),
        (&json!("denied"), &json!("b"), &json!("29.00")),
        "{v}"
    );
}
on_both!(a_child_is_denied_past_its_parents_limit);

/// 50 concurrent holds of 1.00 across a, b and c (none with quotas of its own) against
/// corp's 10.00: exactly 10 are allowed, every denial names corp at 10.00 of 10.00. A
/// release lets exactly one more through.
async fn fifty_concurrent_holds_across_three_children_fit_the_parents_ten(db: Db) {
    let t = Arc::new(tree(db, json!({"spend_limit": "10.00"})).await);
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let t = t.clone();
            let account = ["a", "b", "c"][i % 3];
            tokio::spawn(async move { (account, authorize(&t, account, 100).await) })
        })
        .collect();
    let mut allowed = Vec::new();
    for c in calls {
        let (account, v) = c.await.unwrap();
        match v["decision"].as_str() {
            Some("allowed") => allowed.push((account, v["hold"].as_str().unwrap().to_string())),
            Some("denied") => {
                assert_eq!(
                    (&v["node"], &v["quota"], &v["used"], &v["limit"]),
                    (
                        &json!("corp"),
                        &json!("spend_limit"),
                        &json!("10.00"),
                        &json!("10.00")
                    ),
                    "{v}"
                );
            }
            _ => panic!("{v}"),
        }
    }
    assert_eq!(allowed.len(), 10, "{db:?}: {allowed:?}");
    let (s, v) = t
        .call(
            "POST",
            &format!("/v1/holds/{}/release", allowed[0].1),
            Some(INGEST),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let again: Vec<_> = (0..6)
        .map(|i| {
            let t = t.clone();
            tokio::spawn(async move { authorize(&t, ["c", "b", "a"][i % 3], 100).await })
        })
        .collect();
    let mut n = 0;
    for a in again {
        n += (a.await.unwrap()["decision"] == "allowed") as usize;
    }
    assert_eq!(n, 1, "{db:?}");
}
on_both!(fifty_concurrent_holds_across_three_children_fit_the_parents_ten);

/// A batch moving a child's cost moves its ancestor's decisions: a's 85.00 crosses corp's
/// warning (80% of 100.00), then c's 20.00 (its own invoice) its limit: two decisions, the
/// node's (`account` and `node` are corp), none for a or c (no quotas of their own).
async fn a_childs_usage_crosses_its_parents_limit_in_a_decision_naming_it(db: Db) {
    let t = tree(db, json!({"spend_limit": "100.00"})).await;
    t.ingest(&[usage("u1", "a", 0, 8500)]).await;
    t.ingest(&[usage("u2", "solo", 0, 50_000)]).await;
    t.ingest(&[usage("u3", "c", 9000, 2000)]).await;
    let (s, v) = t.admin("GET", "/v1/quota/decisions", "").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let list = v["decisions"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str, &str, &str)> = list
        .iter()
        .map(|d| {
            (
                d["account"].as_str().unwrap(),
                d["node"].as_str().unwrap(),
                d["quota"].as_str().unwrap(),
                d["kind"].as_str().unwrap(),
                d["used"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("corp", "corp", "spend_limit", "warn", "85"),
            ("corp", "corp", "spend_limit", "limit", "105"),
        ],
        "{db:?}: {v}"
    );
    // On the quota topic too, naming the node.
    let outbox = t.state.store.log().outbox_pending(1000).await.unwrap();
    let nodes: Vec<Value> = outbox
        .iter()
        .filter(|r| r.topic == "billing.quota.v1")
        .map(|r| serde_json::from_str::<Value>(&r.payload).unwrap()["node"].clone())
        .collect();
    assert_eq!(nodes, [json!("corp"), json!("corp")]);
}
on_both!(a_childs_usage_crosses_its_parents_limit_in_a_decision_naming_it);

/// Section 19: a budget is a billing domain's. corp's budget in region `eu` (3.00) bounds
/// its subtree's holds and usage in `eu` (`a@eu`, `c@eu`), and only those: home holds are
/// not counted there, nor `eu` holds against corp's home budget (1.00). A child's `eu`
/// usage crosses corp's `eu` limit in a decision of corp in `eu`, naming the node.
async fn a_regions_budget_bounds_the_subtree_in_that_region(db: Db) {
    let t = tree(db, json!({"spend_limit": "1.00"})).await;
    t.put_pricebook(&format!(
        "{BOOK}[regions.\"eu\"]\ncurrency = \"EUR\"\ntimezone = \"UTC\"\n[regions.\"eu\".skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n"
    ))
    .await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/corp/quotas?region=eu",
            json!({"spend_limit": "3.00"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let in_eu = async |account: &str| {
        let (s, v) = t
            .call(
                "POST",
                "/v1/authorize",
                Some(INGEST),
                "application/json",
                json!({"account": account, "region": "eu", "sku": "gpu.h100", "quantity": "1", "seconds": 100})
                    .to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    };
    // Home: corp's home budget (1.00) fits one hold.
    assert_eq!(authorize(&t, "a", 100).await["decision"], "allowed");
    let v = authorize(&t, "c", 100).await;
    assert_eq!(
        (&v["decision"], &v["node"]),
        (&json!("denied"), &json!("corp")),
        "{v}"
    );
    // eu: three holds of 1.00 across a and c, the fourth denied naming corp at 3.00.
    for account in ["a", "c", "a"] {
        assert_eq!(in_eu(account).await["decision"], "allowed", "{account}");
    }
    let v = in_eu("c").await;
    assert_eq!(
        (&v["decision"], &v["node"], &v["used"], &v["limit"]),
        (
            &json!("denied"),
            &json!("corp"),
            &json!("3.00"),
            &json!("3.00")
        ),
        "{v}"
    );
    // A child's usage in eu moves corp's eu decisions (4.00 over 3.00), not its home ones.
    let mut e: Value = serde_json::from_str(&usage("u1", "a", 0, 400)).unwrap();
    e["data"]["region"] = json!("eu");
    t.ingest(&[e.to_string()]).await;
    let (_, v) = t.admin("GET", "/v1/quota/decisions", "").await;
    let seen: Vec<(&str, &str, &str, &str)> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["account"].as_str().unwrap(),
                d["node"].as_str().unwrap(),
                d["region"].as_str().unwrap_or("home"),
                d["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("corp", "corp", "eu", "warn"),
            ("corp", "corp", "eu", "limit")
        ],
        "{v}"
    );
}
on_both!(a_regions_budget_bounds_the_subtree_in_that_region);
