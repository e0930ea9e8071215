//! The small organization of issue 27's console view, shared by tests/organization_view.rs
//! and tests/console.rs (`#[path]` module): `corp` pays for `ml` and `web`, projects by
//! `lease.tags`, a spend limit on `corp`.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::json;

/// 2026-11-01T00:00:00Z (the book's timezone is UTC).
const NOV_1: i64 = 1_793_491_200;

/// Under ten pooled hours, every hour at 30.00.
const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"
allocation_tag = "project"

[skus."gpu.o"]
tiers = [ { up_to_hours = 10, rate_per_hour = "30.00" }, { rate_per_hour = "20.00" } ]
"#;

fn usage(id: &str, account: &str, lease: &str, start: i64, hours: i64) -> String {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
        "subject":account,"data":{"lease":lease,"resource":"r1","sku":"gpu.o",
        "start":rfc(start),"end":rfc(start + hours * 3600),"quantity":"1"}})
    .to_string()
}

fn tags(id: &str, account: &str, lease: &str, project: &str, at: i64) -> String {
    json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.tags",
        "subject":account,"data":{"lease":lease,"tags":{"project":project},"at":rfc(at)}})
    .to_string()
}

/// The small tree of the console test too: `corp` pays for `ml` and `web`; `corp` has a
/// spend limit of 1000.00. November: ml 4 h on project p-x (120.00), web 3 h, the first on
/// p-x then p-y (30.00 + 60.00), corp 1 h untagged (30.00): 240.00 pooled, all in the first
/// tier. Returns corp's owner key and ml's.
pub async fn small_tree(t: &TestApp) -> (String, String) {
    t.put_pricebook(BOOK).await;
    let corp = t.account("corp").await;
    let mut ml = String::new();
    for id in ["ml", "web"] {
        let (s, v) = t
            .admin(
                "POST",
                "/v1/admin/accounts",
                format!(r#"{{"id":"{id}","parent":"corp","pays":"parent"}}"#),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        if id == "ml" {
            ml = v["api_key"].as_str().unwrap().to_string();
        }
    }
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/corp/quotas",
            r#"{"spend_limit":"1000.00"}"#.to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let day = 86_400;
    t.ingest(&[
        tags("t1", "ml", "Lm", "p-x", NOV_1 + day),
        usage("u1", "ml", "Lm", NOV_1 + day, 4),
        tags("t2", "web", "Lw", "p-x", NOV_1 + 2 * day),
        tags("t3", "web", "Lw", "p-y", NOV_1 + 2 * day + 3600),
        usage("u2", "web", "Lw", NOV_1 + 2 * day, 3),
        usage("u3", "corp", "Lc", NOV_1 + 3 * day, 1),
    ])
    .await;
    (corp, ml)
}
