//! Issue 27, roles and scopes: API keys with a role (owner, finance, viewer, member) and a
//! scope (the account a key was issued for and the accounts below it in the organization).
//!
//! The tree of every test: root -> {team-a, team-b}, team-a -> {a1}, and `other`, a tenant
//! outside it. Every account pays for itself (the engine refuses `pays = "parent"` until it
//! rates section 18): a key's scope follows `parent`, whoever pays. The expected answers
//! are computed here from the tree and the README's table ("Keys and roles"), not from the
//! code's: a key reaches its account and the accounts below it (a member key its own only);
//! outside that, a 404 worded as for an unknown account; inside it, a role without the
//! permission is a 403 naming the role.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

const BOOK: &str = r#"currency = "CNY"

[skus."gpu.h100-80g"]
rate_per_hour = "36"

[[accounts]]
id = "root"

[[accounts]]
id = "team-a"
parent = "root"

[[accounts]]
id = "team-b"
parent = "root"

[[accounts]]
id = "a1"
parent = "team-a"
"#;

/// The registered accounts: the tree and a tenant outside it.
const ACCOUNTS: [&str; 5] = ["root", "team-a", "team-b", "a1", "other"];

/// What the probes ask for besides them: an account nobody registered.
const UNKNOWN: &str = "nobody";

const ROLES: [&str; 4] = ["owner", "finance", "viewer", "member"];

/// The test's own copy of the tree: child -> parent.
fn parent(account: &str) -> Option<&'static str> {
    match account {
        "team-a" | "team-b" => Some("root"),
        "a1" => Some("team-a"),
        _ => None,
    }
}

/// Whether a key of `role` issued for `scope` reaches `target`.
fn reaches(scope: &str, role: &str, target: &str) -> bool {
    if target == scope {
        return true;
    }
    if role == "member" {
        return false;
    }
    let mut at = target;
    while let Some(p) = parent(at) {
        if p == scope {
            return true;
        }
        at = p;
    }
    false
}

/// What a customer route does, for the table below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prices,
    Usage,
    Cost,
    Invoices,
    Allocation,
    /// `GET /v1/organization`: owner and finance keys only.
    Organization,
    Wallet,
    Spend,
    Keys,
    /// `GET /v1/me`: about the key itself, no account parameter; every key may ask.
    Me,
    /// Issue 28: reading notifications and their settings (every role).
    Notify,
    /// Issue 28: budgets, alerts, webhooks (owner, finance, member).
    ManageNotify,
}

/// The README's table of permissions ("Keys and roles"), written out again.
fn permitted(role: &str, kind: Kind) -> bool {
    use Kind::*;
    match role {
        "owner" => true,
        "finance" => matches!(
            kind,
            Prices
                | Cost
                | Invoices
                | Allocation
                | Organization
                | Wallet
                | Me
                | Notify
                | ManageNotify
        ),
        "viewer" => matches!(kind, Prices | Usage | Cost | Me | Notify),
        "member" => !matches!(kind, Keys | Organization),
        other => panic!("no role {other}"),
    }
}

/// Every customer route (method, path as `/openapi.json` lists it) with what it does. A route
/// of the document that is not here and not an admin or operations route fails the test: a
/// new route is never skipped silently.
fn routes() -> BTreeMap<(&'static str, &'static str), Kind> {
    use Kind::*;
    BTreeMap::from([
        (("get", "/v1/me"), Me),
        (("get", "/v1/prices"), Prices),
        (("get", "/v1/usage"), Usage),
        (("get", "/v1/cost/current"), Cost),
        (("post", "/v1/estimate"), Cost),
        (("get", "/v1/quota/decisions"), Cost),
        (("get", "/v1/invoices"), Invoices),
        (("get", "/v1/invoices/{id}"), Invoices),
        (("get", "/v1/allocation"), Allocation),
        (("get", "/v1/organization"), Organization),
        (("get", "/v1/balance"), Wallet),
        (("post", "/v1/authorize"), Spend),
        (("post", "/v1/holds/{id}/extend"), Spend),
        (("post", "/v1/holds/{id}/release"), Spend),
        (("get", "/v1/accounts/{id}/keys"), Keys),
        (("post", "/v1/accounts/{id}/keys"), Keys),
        (("delete", "/v1/accounts/{id}/keys/{key_id}"), Keys),
        (("post", "/v1/accounts/{id}/keys/{key_id}/rotate"), Keys),
        // Issue 28: notifications.
        (("get", "/v1/notifications"), Notify),
        (("get", "/v1/accounts/{id}/notify"), Notify),
        (("put", "/v1/accounts/{id}/budgets/{budget}"), ManageNotify),
        (
            ("delete", "/v1/accounts/{id}/budgets/{budget}"),
            ManageNotify,
        ),
        (("put", "/v1/accounts/{id}/alerts"), ManageNotify),
        // Issue 28, webhooks (branch hooks3).
        (("get", "/v1/accounts/{id}/webhooks"), Notify),
        (("post", "/v1/accounts/{id}/webhooks"), ManageNotify),
        (("get", "/v1/accounts/{id}/webhooks/{endpoint}"), Notify),
        (
            ("patch", "/v1/accounts/{id}/webhooks/{endpoint}"),
            ManageNotify,
        ),
        (
            ("delete", "/v1/accounts/{id}/webhooks/{endpoint}"),
            ManageNotify,
        ),
        (
            ("post", "/v1/accounts/{id}/webhooks/{endpoint}/rotate"),
            ManageNotify,
        ),
        (
            ("post", "/v1/accounts/{id}/webhooks/{endpoint}/enable"),
            ManageNotify,
        ),
        (
            ("post", "/v1/accounts/{id}/webhooks/{endpoint}/test"),
            ManageNotify,
        ),
        (
            ("get", "/v1/accounts/{id}/webhooks/{endpoint}/deliveries"),
            Notify,
        ),
        (
            (
                "post",
                "/v1/accounts/{id}/webhooks/{endpoint}/deliveries/{notification}/resend",
            ),
            ManageNotify,
        ),
        // End of issue 28, webhooks.
    ])
}

/// Routes that take no customer key by design: the admin's, ingest and operations.
fn not_a_customer_route(path: &str) -> bool {
    path.starts_with("/v1/admin/")
        || [
            "/healthz",
            "/readyz",
            "/openapi.json",
            "/metrics",
            "/v1/events",
        ]
        .contains(&path)
}

struct Org {
    t: TestApp,
    /// (account, role) -> secret.
    keys: BTreeMap<(String, String), String>,
}

async fn org(db: Db) -> Org {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let mut keys = BTreeMap::new();
    for account in ACCOUNTS {
        let owner = t.account(account).await;
        keys.insert((account.to_string(), "owner".to_string()), owner);
        for role in &ROLES[1..] {
            let (s, v) = t
                .admin(
                    "POST",
                    &format!("/v1/admin/accounts/{account}/keys"),
                    json!({ "role": role }).to_string(),
                )
                .await;
            assert_eq!(s, StatusCode::CREATED, "{v}");
            assert_eq!(v["role"], *role, "{v}");
            keys.insert(
                (account.to_string(), role.to_string()),
                v["api_key"].as_str().unwrap().to_string(),
            );
        }
    }
    Org { t, keys }
}

impl Org {
    fn key(&self, account: &str, role: &str) -> &str {
        &self.keys[&(account.to_string(), role.to_string())]
    }
}

fn hold_request(account: &str) -> Value {
    json!({"account": account, "sku": "gpu.h100-80g", "quantity": "1", "seconds": 60, "ttl_seconds": 60})
}

/// A live hold of `account` made with the admin token (a made-up id for an unregistered one).
async fn admin_hold(t: &TestApp, account: &str) -> String {
    if !ACCOUNTS.contains(&account) {
        return "hold_nope".into();
    }
    let (s, v) = t
        .admin("POST", "/v1/authorize", hold_request(account).to_string())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v["hold"].as_str().unwrap().to_string()
}

/// A fresh viewer key of `account` made with the admin token: its id (a made-up one for an
/// unregistered account).
async fn admin_key_id(t: &TestApp, account: &str) -> String {
    if !ACCOUNTS.contains(&account) {
        return "0123456789abcdef".into();
    }
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/admin/accounts/{account}/keys"),
            r#"{"role":"viewer"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v["key_id"].as_str().unwrap().to_string()
}

/// Issue 28, webhooks (branch hooks3): a live endpoint of `account`, made with the admin
/// token, on a public address literal (never called: no worker runs here); a made-up id for
/// an unregistered account.
async fn admin_endpoint(t: &TestApp, account: &str) -> String {
    if !ACCOUNTS.contains(&account) {
        return "ep_nope".into();
    }
    // One live endpoint per account is enough (the probes delete some).
    let (_, listed) = t
        .admin("GET", &format!("/v1/accounts/{account}/webhooks"), "")
        .await;
    if let Some(id) = listed["endpoints"][0]["id"].as_str() {
        return id.to_string();
    }
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/{account}/webhooks"),
            r#"{"url":"https://93.184.215.14/hook"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v["id"].as_str().unwrap().to_string()
}

/// One probe: `key` calls (method, path) for `target` (None: no `account` parameter, the key's
/// own). Returns (status, body, what the request was).
async fn probe(
    t: &TestApp,
    (method, path): (&str, &str),
    key: &str,
    target: Option<&str>,
) -> (StatusCode, Value, String) {
    let own = |q: &str| match target {
        Some(a) if q.is_empty() => format!("?account={a}"),
        Some(a) => format!("?{q}&account={a}"),
        None if q.is_empty() => String::new(),
        None => format!("?{q}"),
    };
    // Routes that name the account in the path or the body need one: the key's own when
    // the probe names none.
    let named = match target {
        Some(a) => a.to_string(),
        None => {
            let (_, me) = t.get("/v1/me", key).await;
            me["account"].as_str().unwrap().to_string()
        }
    };
    let (uri, body) = match (method, path) {
        ("get", "/v1/me") => ("/v1/me".to_string(), String::new()),
        ("get", "/v1/usage") => (
            format!(
                "/v1/usage{}",
                own("from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z")
            ),
            String::new(),
        ),
        ("get", "/v1/invoices/{id}") => {
            (format!("/v1/invoices/inv_nope{}", own("")), String::new())
        }
        ("post", "/v1/estimate") => {
            let mut body = json!({"sku": "gpu.h100-80g", "quantity": "1",
                "start": "2026-12-05T00:00:00Z", "duration_seconds": 3600});
            if let Some(a) = target {
                body["account"] = json!(a);
            }
            ("/v1/estimate".to_string(), body.to_string())
        }
        ("post", "/v1/authorize") => (
            "/v1/authorize".to_string(),
            hold_request(&named).to_string(),
        ),
        ("post", "/v1/holds/{id}/extend") | ("post", "/v1/holds/{id}/release") => {
            let hold = admin_hold(t, &named).await;
            (path.replace("{id}", &hold) + &own(""), String::new())
        }
        ("get", "/v1/accounts/{id}/keys") => (format!("/v1/accounts/{named}/keys"), String::new()),
        ("post", "/v1/accounts/{id}/keys") => (
            format!("/v1/accounts/{named}/keys"),
            r#"{"role":"member"}"#.to_string(),
        ),
        ("delete", "/v1/accounts/{id}/keys/{key_id}")
        | ("post", "/v1/accounts/{id}/keys/{key_id}/rotate") => {
            let id = admin_key_id(t, &named).await;
            (
                path.replace("{id}", &named).replace("{key_id}", &id),
                String::new(),
            )
        }
        // Issue 28: the account in the path; a budget to set, one that is not there to
        // remove (its 404 is the allowed answer), alerts off.
        ("get", "/v1/accounts/{id}/notify") => {
            (format!("/v1/accounts/{named}/notify"), String::new())
        }
        ("put", "/v1/accounts/{id}/budgets/{budget}") => (
            format!("/v1/accounts/{named}/budgets/b1"),
            r#"{"amount":"100","thresholds":["50"]}"#.to_string(),
        ),
        ("delete", "/v1/accounts/{id}/budgets/{budget}") => {
            (format!("/v1/accounts/{named}/budgets/nope"), String::new())
        }
        ("put", "/v1/accounts/{id}/alerts") => {
            (format!("/v1/accounts/{named}/alerts"), "{}".to_string())
        }
        // Issue 28, webhooks (branch hooks3).
        ("post", "/v1/accounts/{id}/webhooks") => (
            format!("/v1/accounts/{named}/webhooks"),
            r#"{"url":"https://93.184.215.14/hook"}"#.to_string(),
        ),
        ("get", "/v1/accounts/{id}/webhooks") => {
            (format!("/v1/accounts/{named}/webhooks"), String::new())
        }
        (_, p) if p.starts_with("/v1/accounts/{id}/webhooks/{endpoint}") => {
            let endpoint = admin_endpoint(t, &named).await;
            let body = if method == "patch" {
                r#"{"description":"probe"}"#.to_string()
            } else {
                String::new()
            };
            (
                p.replace("{id}", &named)
                    .replace("{endpoint}", &endpoint)
                    .replace("{notification}", "999999"),
                body,
            )
        }
        (_, p) => (format!("{p}{}", own("")), String::new()),
    };
    let m = method.to_uppercase();
    let (s, v) = t.call(&m, &uri, Some(key), "application/json", body).await;
    (s, v, format!("{m} {uri}"))
}

/// What an allowed probe answers.
fn allowed_answer(path: &str, method: &str, s: StatusCode, v: &Value, target: &str) -> bool {
    match (method, path) {
        // No such invoice for an account the key may read: the invoice's 404.
        ("get", "/v1/invoices/{id}") => {
            s == StatusCode::NOT_FOUND
                && v["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("no invoice")
        }
        ("post", "/v1/accounts/{id}/keys") | ("post", "/v1/accounts/{id}/keys/{key_id}/rotate") => {
            s == StatusCode::CREATED && v["account"] == target
        }
        ("delete", "/v1/accounts/{id}/budgets/{budget}") => {
            s == StatusCode::NOT_FOUND
                && v["message"].as_str().unwrap_or("").starts_with("no budget")
        }
        ("delete", _) => s == StatusCode::NO_CONTENT,
        ("get", "/v1/accounts/{id}/notify") => s == StatusCode::OK && v["account"] == target,
        // Issue 28, webhooks (branch hooks3): a new endpoint; no delivery of a made-up
        // notification to resend.
        ("post", "/v1/accounts/{id}/webhooks") => {
            s == StatusCode::CREATED && v["account"] == target
        }
        ("post", "/v1/accounts/{id}/webhooks/{endpoint}/deliveries/{notification}/resend") => {
            s == StatusCode::NOT_FOUND
                && v["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("no delivery")
        }
        ("get", "/v1/accounts/{id}/webhooks") => s == StatusCode::OK && v["account"] == target,
        ("get", "/v1/usage") | ("get", "/v1/accounts/{id}/keys") => {
            s == StatusCode::OK && v["account"] == target
        }
        ("get", "/v1/cost/current") => s == StatusCode::OK && v["invoice"]["account"] == target,
        ("get", "/v1/balance") => s == StatusCode::OK && v["account"] == target,
        // Nothing to allocate yet (no usage): the allocation's own 404.
        ("get", "/v1/allocation") => {
            s == StatusCode::OK
                || s == StatusCode::NOT_FOUND
                    && v["message"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("no invoice holds")
        }
        _ => s == StatusCode::OK,
    }
}

/// (a) Random probes over every customer route and every (key, target account) pair: allowed
/// iff the target is within the key's scope and its role permits the route; else a 404 worded
/// as for an unknown account outside the scope, a 403 naming the role inside it.
async fn every_route_answers_within_the_scope_and_the_role(db: Db) {
    let o = org(db).await;
    let t = &o.t;
    let (s, doc) = t.call("GET", "/openapi.json", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    let table = routes();
    let mut walked: Vec<(&'static str, &'static str)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if not_a_customer_route(path) {
                continue;
            }
            let known = table
                .keys()
                .find(|(m, p)| m == method && p == path)
                .unwrap_or_else(|| {
                    panic!(
                        "{} {path} is a customer route the scope test does not know: add it to routes()",
                        method.to_uppercase()
                    )
                });
            walked.push(*known);
        }
    }
    assert_eq!(
        walked.len(),
        table.len(),
        "a route of the table is gone: {walked:?}"
    );

    // Every (route, key, target) once, in a random order (the seed is printed on failure).
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = Rng(seed);
    let targets: Vec<Option<&str>> = ACCOUNTS
        .iter()
        .copied()
        .chain([UNKNOWN])
        .map(Some)
        .chain([None])
        .collect();
    let mut probes = Vec::new();
    for route in &walked {
        for scope in ACCOUNTS {
            for role in ROLES {
                for target in &targets {
                    probes.push((*route, scope, role, *target));
                }
            }
        }
    }
    for i in (1..probes.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        probes.swap(i, j);
    }
    let mut counts = BTreeMap::<&str, usize>::new();
    for ((method, path), scope, role, target) in probes {
        let kind = table[&(method, path)];
        let key = o.key(scope, role);
        let (s, v, asked) = probe(t, (method, path), key, target).await;
        let at = format!("seed {seed}: {role} key of {scope}, {asked} -> {s} {v}");
        let goal = target.unwrap_or(scope);
        if kind == Kind::Me {
            assert_eq!(s, StatusCode::OK, "{at}");
            assert_eq!(v["account"], scope, "{at}");
            assert_eq!(v["scope"], scope, "{at}");
            assert_eq!(v["key_role"], role, "{at}");
            *counts.entry("me").or_default() += 1;
        } else if !reaches(scope, role, goal) {
            assert_eq!(s, StatusCode::NOT_FOUND, "{at}");
            assert_eq!(
                v["message"],
                format!("unknown account {goal:?}"),
                "outside the scope, the words of an unknown account: {at}"
            );
            *counts.entry("outside the scope").or_default() += 1;
        } else if !permitted(role, kind) {
            assert_eq!(s, StatusCode::FORBIDDEN, "{at}");
            let message = v["message"].as_str().unwrap_or("");
            assert!(message.contains(&format!("a {role} key may not")), "{at}");
            *counts.entry("role lacks it").or_default() += 1;
        } else {
            assert!(allowed_answer(path, method, s, &v, goal), "allowed: {at}");
            *counts.entry("allowed").or_default() += 1;
        }
    }
    // Each outcome happened, on many probes.
    for outcome in ["me", "outside the scope", "role lacks it", "allowed"] {
        assert!(counts.get(outcome).copied().unwrap_or(0) > 10, "{counts:?}");
    }
}
on_both!(every_route_answers_within_the_scope_and_the_role);

fn key_id(listed: &Value, role: &str, live: bool) -> Vec<String> {
    listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["role"] == role && k["revoked_at"].is_null() == live)
        .map(|k| k["key_id"].as_str().unwrap().to_string())
        .collect()
}

async fn me(t: &TestApp, key: &str) -> (StatusCode, Value) {
    t.get("/v1/me", key).await
}

/// (b) An owner key of root rotates team-a's finance key: the old secret is refused (401),
/// the new one works with the same role and scope, both keys are listed (the old one revoked),
/// and the audit log names the owner key as the actor.
async fn a_rotated_key_stops_working_and_the_audit_names_who_rotated_it(db: Db) {
    let o = org(db).await;
    let t = &o.t;
    let root_owner = o.key("root", "owner");
    let old = o.key("team-a", "finance");
    let (_, root_me) = me(t, root_owner).await;
    let root_owner_id = root_me["key_id"].as_str().unwrap().to_string();
    let (s, listed) = t.get("/v1/accounts/team-a/keys", root_owner).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    let old_id = key_id(&listed, "finance", true);
    assert_eq!(old_id.len(), 1, "{listed}");
    let old_id = &old_id[0];
    let (s, rotated) = t
        .call(
            "POST",
            &format!("/v1/accounts/team-a/keys/{old_id}/rotate"),
            Some(root_owner),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{rotated}");
    assert_eq!(rotated["role"], "finance");
    assert_eq!(rotated["revoked_key_id"], old_id.as_str());
    let new = rotated["api_key"].as_str().unwrap();
    let new_id = rotated["key_id"].as_str().unwrap();
    assert_ne!(new_id, old_id);
    // The old secret: 401 everywhere; the new one: the same role and scope.
    assert_eq!(me(t, old).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        t.get("/v1/invoices?account=a1", old).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (s, v) = me(t, new).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (&v["account"], &v["key_role"]),
        (&json!("team-a"), &json!("finance"))
    );
    assert_eq!(
        t.get("/v1/invoices?account=a1", new).await.0,
        StatusCode::OK
    );
    assert_eq!(t.get("/v1/usage", new).await.0, StatusCode::FORBIDDEN);
    // Rotating the revoked key again: it has no live key of that id.
    let (s, _) = t
        .call(
            "POST",
            &format!("/v1/accounts/team-a/keys/{old_id}/rotate"),
            Some(root_owner),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // Listed: the old one revoked, the new one made by the root's owner key.
    let (_, listed) = t.get("/v1/admin/accounts/team-a/keys", ADMIN).await;
    assert_eq!(
        key_id(&listed, "finance", false),
        vec![old_id.clone()],
        "{listed}"
    );
    assert_eq!(
        key_id(&listed, "finance", true),
        vec![new_id.to_string()],
        "{listed}"
    );
    let made = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key_id"] == new_id)
        .unwrap();
    assert_eq!(
        made["created_by"],
        format!("key:{root_owner_id}"),
        "{listed}"
    );
    // The audit log: the rotation, by the root's owner key.
    let (_, audit) = t.get("/v1/admin/audit?limit=1000", ADMIN).await;
    let rotation: Vec<&Value> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "account.key.rotate")
        .collect();
    assert_eq!(rotation.len(), 1, "{audit}");
    assert_eq!(rotation[0]["actor"], format!("key:{root_owner_id}"));
    assert_eq!(rotation[0]["command"]["account"], "team-a");
    assert_eq!(rotation[0]["command"]["key_id"], old_id.as_str());
    assert_eq!(rotation[0]["command"]["role"], "finance");
    // The admin rotates on its own route too, named `admin`.
    let (_, listed) = t.get("/v1/admin/accounts/team-b/keys", ADMIN).await;
    let viewer = &key_id(&listed, "viewer", true)[0];
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/admin/accounts/team-b/keys/{viewer}/rotate"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["role"], "viewer");
    assert_eq!(
        me(t, o.key("team-b", "viewer")).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (_, audit) = t.get("/v1/admin/audit?limit=1000", ADMIN).await;
    let last = audit["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["action"], &last["actor"]),
        (&json!("account.key.rotate"), &json!("admin"))
    );
}
on_both!(a_rotated_key_stops_working_and_the_audit_names_who_rotated_it);

/// (c) An owner key of the parent revokes a child's key: it stops working at once, stays
/// listed with its revocation time, and the audit names the parent's key. Keys of other roles
/// cannot manage keys (403); an owner key cannot reach above or beside its scope (404); the
/// admin's routes stay the admin's.
async fn an_owner_key_of_the_parent_revokes_a_childs_key(db: Db) {
    let o = org(db).await;
    let t = &o.t;
    let root_owner = o.key("root", "owner");
    let a1_viewer = o.key("a1", "viewer");
    assert_eq!(
        t.get(
            "/v1/usage?from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z",
            a1_viewer
        )
        .await
        .0,
        StatusCode::OK
    );
    let (_, listed) = t.get("/v1/accounts/a1/keys", root_owner).await;
    let id = key_id(&listed, "viewer", true)[0].clone();
    // Not with a key of another role, in or above the scope, nor beside or above it.
    for role in ["finance", "viewer", "member"] {
        let (s, v) = t
            .call(
                "DELETE",
                &format!("/v1/accounts/a1/keys/{id}"),
                Some(o.key("a1", role)),
                "",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{role}: {v}");
        assert!(v["message"].as_str().unwrap().contains(role), "{v}");
    }
    for role in ["finance", "viewer"] {
        let (s, _) = t
            .call(
                "DELETE",
                &format!("/v1/accounts/a1/keys/{id}"),
                Some(o.key("root", role)),
                "",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{role} of root");
    }
    let (s, v) = t
        .call(
            "DELETE",
            &format!("/v1/accounts/a1/keys/{id}"),
            Some(o.key("team-b", "owner")),
            "",
            "",
        )
        .await;
    assert_eq!(
        (s, &v["message"]),
        (StatusCode::NOT_FOUND, &json!("unknown account \"a1\"")),
        "{v}"
    );
    let (s, _) = t
        .call(
            "GET",
            "/v1/accounts/root/keys",
            Some(o.key("team-a", "owner")),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "above the scope");
    // The admin's routes take the admin token only, an owner key included.
    let (s, _) = t
        .call(
            "DELETE",
            &format!("/v1/admin/accounts/a1/keys/{id}"),
            Some(root_owner),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    assert_eq!(
        me(t, a1_viewer).await.0,
        StatusCode::OK,
        "nothing was revoked"
    );
    // The owner key of the grandparent revokes it.
    let (s, v) = t
        .call(
            "DELETE",
            &format!("/v1/accounts/a1/keys/{id}"),
            Some(root_owner),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    assert_eq!(me(t, a1_viewer).await.0, StatusCode::UNAUTHORIZED);
    let (s, _) = t
        .call(
            "DELETE",
            &format!("/v1/accounts/a1/keys/{id}"),
            Some(root_owner),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "revoked already");
    let (_, listed) = t
        .get("/v1/accounts/a1/keys", o.key("team-a", "owner"))
        .await;
    assert_eq!(
        key_id(&listed, "viewer", false),
        vec![id.clone()],
        "{listed}"
    );
    let (_, root_me) = me(t, root_owner).await;
    let (_, audit) = t.get("/v1/admin/audit?limit=1000", ADMIN).await;
    let last = audit["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["action"], "account.key.revoke", "{last}");
    assert_eq!(
        last["actor"],
        format!("key:{}", root_me["key_id"].as_str().unwrap())
    );
    assert_eq!(last["command"]["key_id"], id.as_str());
    // An owner key issues keys of any role within its scope, named as their maker.
    let (s, v) = t
        .call(
            "POST",
            "/v1/accounts/a1/keys",
            Some(o.key("team-a", "owner")),
            "application/json",
            r#"{"role":"viewer"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let (_, mine) = me(t, v["api_key"].as_str().unwrap()).await;
    assert_eq!(
        (&mine["account"], &mine["key_role"]),
        (&json!("a1"), &json!("viewer"))
    );
    let (s, v) = t
        .call(
            "POST",
            "/v1/accounts/a1/keys",
            Some(o.key("team-a", "owner")),
            "application/json",
            r#"{"role":"admin"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
}
on_both!(an_owner_key_of_the_parent_revokes_a_childs_key);

/// (d) A member key of team-a reads its own account and nothing else: not team-b (beside),
/// not root (above), not even a1 (below: a member's scope is its account).
async fn a_member_key_reads_its_own_account_only(db: Db) {
    let o = org(db).await;
    let t = &o.t;
    let member = o.key("team-a", "member");
    let range = "from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z";
    for own in [
        format!("/v1/usage?{range}"),
        format!("/v1/usage?{range}&account=team-a"),
    ] {
        let (s, v) = t.get(&own, member).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["account"], "team-a");
    }
    for other in ["team-b", "root", "a1", "other", UNKNOWN] {
        for uri in [
            format!("/v1/usage?{range}&account={other}"),
            format!("/v1/invoices?account={other}"),
            format!("/v1/balance?account={other}"),
            format!("/v1/cost/current?account={other}"),
            format!("/v1/quota/decisions?account={other}"),
        ] {
            let (s, v) = t.get(&uri, member).await;
            assert_eq!(s, StatusCode::NOT_FOUND, "{uri}: {v}");
            assert_eq!(v["message"], format!("unknown account {other:?}"), "{uri}");
        }
    }
    // The owner key of team-a reads a1 but not team-b or root.
    let owner = o.key("team-a", "owner");
    assert_eq!(
        t.get(&format!("/v1/usage?{range}&account=a1"), owner)
            .await
            .0,
        StatusCode::OK
    );
    for other in ["team-b", "root"] {
        let (s, _) = t
            .get(&format!("/v1/usage?{range}&account={other}"), owner)
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{other}");
    }
}
on_both!(a_member_key_reads_its_own_account_only);

/// Key changes are commands: applied to an empty store (what `gpubill replay` does with the
/// commands topic; here the outbox rows the relay would publish), they give the same keys,
/// roles, makers and revocations, and the same secrets work or are refused.
async fn key_commands_replay_to_the_same_keys(db: Db) {
    let o = org(db).await;
    let t = &o.t;
    let root_owner = o.key("root", "owner");
    let (_, listed) = t.get("/v1/accounts/a1/keys", root_owner).await;
    let member = key_id(&listed, "member", true)[0].clone();
    let viewer = key_id(&listed, "viewer", true)[0].clone();
    let (s, rotated) = t
        .call(
            "POST",
            &format!("/v1/accounts/a1/keys/{member}/rotate"),
            Some(root_owner),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{rotated}");
    let (s, _) = t
        .call(
            "DELETE",
            &format!("/v1/accounts/a1/keys/{viewer}"),
            Some(o.key("team-a", "owner")),
            "",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let commands: Vec<billing_store::Command> = t
        .state
        .store
        .log()
        .outbox_pending(10_000)
        .await
        .unwrap()
        .iter()
        .filter(|r| r.topic == t.state.store.topics().commands)
        .map(|r| serde_json::from_str(&r.payload).unwrap())
        .collect();
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, billing_store::Command::RotateApiKey { .. })),
        "{commands:?}"
    );
    let replayed = TestApp::fresh(db).await;
    for c in &commands {
        replayed.state.store.log().apply_command(c).await.unwrap();
    }
    for account in ACCOUNTS {
        let uri = format!("/v1/admin/accounts/{account}/keys");
        let (_, a) = t.admin("GET", &uri, "").await;
        let (_, b) = replayed.admin("GET", &uri, "").await;
        assert_eq!(a, b, "{uri}");
    }
    let new = rotated["api_key"].as_str().unwrap();
    for (key, status) in [
        (new, StatusCode::OK),
        (o.key("a1", "member"), StatusCode::UNAUTHORIZED),
        (o.key("a1", "viewer"), StatusCode::UNAUTHORIZED),
        (o.key("a1", "finance"), StatusCode::OK),
    ] {
        let (s, a) = me(t, key).await;
        let (s2, b) = me(&replayed, key).await;
        assert_eq!((s, s2), (status, status), "{a} {b}");
        assert_eq!(a, b);
    }
}
on_both!(key_commands_replay_to_the_same_keys);
