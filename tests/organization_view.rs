//! Issue 27, the console's organization view: `GET /v1/organization` answers the nodes of a
//! key's subtree with their cost to date (the sum of their allocation rows), their subtree's
//! cost and their budget (`spend_limit`), and the cost by (account, project); owner and
//! finance keys only, never above or beside the scope.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};

#[path = "org_fixture.rs"]
mod org_fixture;
use org_fixture::small_tree;

async fn org(t: &TestApp, token: &str, q: &str) -> (StatusCode, Value) {
    t.get(&format!("/v1/organization?period=2026-11{q}"), token)
        .await
}

fn node<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .unwrap_or_else(|| panic!("no node {id}: {v}"))
}

async fn worked_numbers(db: Db) {
    let t = TestApp::fresh(db).await;
    let (corp, ml) = small_tree(&t).await;
    let (s, v) = org(&t, &corp, "").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["root"], "corp");
    assert_eq!(v["period"], "2026-11");
    assert_eq!(v["currency"], "CNY");
    assert_eq!(v["total"], "240.00", "{v}");
    let ids: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["corp", "ml", "web"], "{v}");
    let c = node(&v, "corp");
    assert_eq!(c["parent"], Value::Null);
    assert_eq!(c["payer"], "corp");
    assert_eq!(c["cost"], "30.00", "{v}");
    assert_eq!(c["subtree_cost"], "240.00", "{v}");
    assert_eq!(c["budget"], "1000.00", "{v}");
    for (id, cost) in [("ml", "120.00"), ("web", "90.00")] {
        let n = node(&v, id);
        assert_eq!(n["parent"], "corp", "{v}");
        assert_eq!(n["payer"], "corp", "{v}");
        assert_eq!(n["cost"], cost, "{v}");
        assert_eq!(n["subtree_cost"], cost, "{v}");
        assert_eq!(n["budget"], Value::Null, "{v}");
    }
    assert_eq!(
        v["by_project"],
        json!([
            {"account": "corp", "tag": "", "total": "30.00"},
            {"account": "ml", "tag": "p-x", "total": "120.00"},
            {"account": "web", "tag": "p-x", "total": "30.00"},
            {"account": "web", "tag": "p-y", "total": "60.00"},
        ]),
        "{v}"
    );
    // The costs are the allocation's, to the cent.
    let (s, a) = t
        .get("/v1/allocation?period=2026-11&group_by=account", &corp)
        .await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(a["invoice_total"], v["total"], "{a}");
    for r in a["rows"].as_array().unwrap() {
        let id = r["account"].as_str().unwrap();
        assert_eq!(node(&v, id)["cost"], r["total"], "{a}");
    }
    // The admin names the root; a finance key reads the same.
    let (s, admin) = org(&t, ADMIN, "&account=corp").await;
    assert_eq!(s, StatusCode::OK, "{admin}");
    assert_eq!(admin, v);
    let (s, none) = org(&t, ADMIN, "").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{none}");
    let mut keys = std::collections::BTreeMap::new();
    for role in ["finance", "viewer", "member"] {
        let (s, k) = t
            .admin(
                "POST",
                "/v1/admin/accounts/corp/keys",
                json!({ "role": role }).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{k}");
        keys.insert(role, k["api_key"].as_str().unwrap().to_string());
    }
    let (s, f) = org(&t, &keys["finance"], "").await;
    assert_eq!(s, StatusCode::OK, "{f}");
    assert_eq!(f, v);
    for role in ["viewer", "member"] {
        let (s, e) = org(&t, &keys[role], "").await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{e}");
        assert_eq!(
            e["message"],
            format!("a {role} key may not read the organization"),
            "{e}"
        );
    }
    // A subtree of the scope: corp's owner names ml.
    let (s, sub) = org(&t, &corp, "&account=ml").await;
    assert_eq!(s, StatusCode::OK, "{sub}");
    assert_eq!(sub["nodes"].as_array().unwrap().len(), 1, "{sub}");
    assert_eq!(node(&sub, "ml")["parent"], Value::Null, "{sub}");
    // ml's owner key: itself alone (nothing above: parent null), never corp nor web.
    let (s, mine) = org(&t, &ml, "").await;
    assert_eq!(s, StatusCode::OK, "{mine}");
    assert_eq!(mine["total"], "120.00", "{mine}");
    assert_eq!(mine["nodes"].as_array().unwrap().len(), 1, "{mine}");
    let n = node(&mine, "ml");
    assert_eq!(n["parent"], Value::Null, "{mine}");
    assert_eq!(n["cost"], "120.00");
    assert_eq!(
        mine["by_project"],
        json!([{"account": "ml", "tag": "p-x", "total": "120.00"}])
    );
    for other in ["corp", "web", "nobody"] {
        let (s, e) = org(&t, &ml, &format!("&account={other}")).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{e}");
        assert_eq!(e["message"], format!("unknown account {other:?}"), "{e}");
    }
    // After the close, the issued invoice's allocation: the same figures.
    let (s, closed) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{closed}");
    let (s, after) = org(&t, &corp, "").await;
    assert_eq!(s, StatusCode::OK, "{after}");
    assert_eq!(after, v);
}
on_both!(worked_numbers);
