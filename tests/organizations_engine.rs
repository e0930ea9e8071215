//! Issue 27 in the engine: billing-semantics section 18 (organizations) goes through the same
//! ingest and close as every other rule. A payer's invoice is rated over its members' ledgers
//! (pooled tiers, a member's reservation covering another's usage, a middle account that pays
//! for itself), with its allocation; members get no invoice of their own. The close equals
//! `gpubill rate` (`rating::rate_month`) for the same events, shuffled and redelivered, with
//! the engine restarted mid-ingest, on SQLite and PostgreSQL; the open period's provisional
//! invoices are the same rating; a member's cost is its allocated part. Moving an account to
//! another payer (an `accounts` term set by command) takes effect from the period it names
//! (every period not yet closed by default) and never reaches a closed one.

use axum::http::StatusCode;
use billing_store::StoreError;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::Value;

/// 2026-11-01T00:00:00Z (the book's timezone is UTC).
const NOV_1: i64 = 1_793_491_200;
const WINDOW: i64 = 30 * 86_400;

/// Three levels: `corp` pays for `corp-ml` and `corp-web`; `lab` (under `corp`) pays for
/// itself and for `lab-a`; `solo` stands alone. `corp-web` holds a reservation that covers
/// any of corp's members; tiers pool over corp's members.
const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"
allocation_tag = "project"

[skus."gpu.o"]
tiers = [ { up_to_hours = 40, rate_per_hour = "30.00" }, { rate_per_hour = "20.00" } ]

[skus."gpu.s"]
rate_per_hour = "7.00"
minimum_seconds = 600

[egress.internet]
tiers = [ { up_to_gb = 5, rate_per_gb = "0.25" }, { rate_per_gb = "0.10" } ]

[tax]
rate = "0.06"

[[accounts]]
id = "corp"

[[accounts]]
id = "corp-ml"
parent = "corp"
pays = "parent"

[[accounts]]
id = "corp-web"
parent = "corp"
pays = "parent"

[[accounts]]
id = "lab"
parent = "corp"

[[accounts]]
id = "lab-a"
parent = "lab"
pays = "parent"

[[reservations]]
account = "corp-web"
sku = "gpu.o"
quantity = "1"
from = "2026-11-03T00:00:00Z"
to = "2026-11-10T00:00:00Z"
rate_per_hour = "12.00"

[[discounts]]
account = "corp"
percent = "10"

[[credits]]
account = "lab"
amount = "20.00"
"#;

const ACCOUNTS: [&str; 6] = ["corp", "corp-ml", "corp-web", "lab", "lab-a", "solo"];
const PAYERS: [&str; 3] = ["corp", "lab", "solo"];
const SKUS: [&str; 2] = ["gpu.o", "gpu.s"];

/// `n` events over November 2026: usage of two skus by every account (several keys each,
/// overlapping, so that pooled seconds and shares matter), egress (half of it naming its
/// lease) and `lease.tags` moving leases between three projects.
fn workload(seed: u64, n: usize) -> Vec<String> {
    let mut g = Gen(seed | 1);
    let mut out = Vec::new();
    for i in 0..n {
        let id = format!("o{seed}-{i}");
        let account = ACCOUNTS[g.below(ACCOUNTS.len() as u64) as usize];
        let kind = g.below(8);
        if kind == 7 {
            // Section 18: a lease's project from `at` on.
            let at = NOV_1 + g.below(WINDOW as u64) as i64;
            let project = ["p-x", "p-y", "p-z"][g.below(3) as usize];
            out.push(
                serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.tags",
                    "subject":account,"data":{"lease":format!("L{}", g.below(3)),
                    "tags":{"project":project,"team":"t"},"at":rfc(at)}})
                .to_string(),
            );
            continue;
        }
        let e = if kind < 6 {
            let sku = SKUS[g.below(2) as usize];
            let start = NOV_1 + g.below((WINDOW - 8 * 3600) as u64) as i64;
            let end = start + 1 + g.below(6 * 3600) as i64;
            serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
                "subject":account,"data":{"lease":format!("L{}", g.below(3)),
                "resource":format!("r{}", g.below(2)),"sku":sku,"start":rfc(start),"end":rfc(end),
                "quantity":(1 + g.below(2)).to_string()}})
        } else {
            let at = NOV_1 + g.below(WINDOW as u64) as i64;
            let mut e = serde_json::json!({"specversion":"1.0","id":id,"source":"gw/1","type":"net.egress",
                "subject":account,"time":rfc(at),"data":{"dest":"internet","bytes":g.below(4_000_000_000)}});
            if g.below(2) == 0 {
                e["data"]["lease"] = format!("L{}", g.below(3)).into();
            }
            e
        };
        out.push(e.to_string());
    }
    out
}

fn dec(v: &Value) -> Decimal {
    v.as_str().unwrap().parse().unwrap()
}

/// Shuffled, 20% redelivered, in batches of 97, the engine reopened half way: before the
/// close each payer's provisional invoice is `gpubill rate`'s (allocation included) and each
/// member's cost is a 409 naming its payer; the close issues exactly `gpubill rate`'s
/// invoices, one per payer, whose allocation rows add up to each total.
async fn payers_close_to_the_offline_invoices(db: Db) {
    for seed in [7u64, 2718] {
        let events = workload(seed, 400);
        let mut delivered = events.clone();
        delivered.extend(events.iter().step_by(5).cloned());
        shuffle(&mut delivered, seed);
        let (store, count) = ingest_with_restart(db, BOOK, &delivered, 97).await;
        assert_eq!(count, events.len(), "seed {seed}");
        let offline = offline_invoices(BOOK, &events, "2026-11");
        let accounts: Vec<&str> = offline
            .iter()
            .map(|i| i["account"].as_str().unwrap())
            .collect();
        assert_eq!(accounts, PAYERS, "seed {seed}: one invoice per payer");
        for invoice in &offline {
            let account = invoice["account"].as_str().unwrap();
            let p = store
                .finance()
                .provisional(account, "2026-11", DEC_2_2026_MS)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                serde_json::to_value(&p.invoice).unwrap(),
                *invoice,
                "seed {seed}: provisional invoice of {account}"
            );
        }
        for member in ["corp-ml", "corp-web", "lab-a"] {
            match store
                .finance()
                .provisional(member, "2026-11", DEC_2_2026_MS)
                .await
            {
                Err(StoreError::PaidByPayer { account, payer }) => {
                    assert_eq!(account, member);
                    assert!(payer == "corp" || payer == "lab", "{payer}");
                }
                other => panic!("seed {seed}: {member}: {other:?}"),
            }
        }
        let issued = store
            .finance()
            .close_period("2026-11", DEC_2_2026_MS)
            .await
            .unwrap();
        let engine: Vec<Value> = issued
            .iter()
            .map(|i| section6(&serde_json::to_value(&i.invoice).unwrap()))
            .collect();
        assert_eq!(
            engine, offline,
            "seed {seed}: engine invoices differ from gpubill rate"
        );
        let corp = &offline[0];
        let rows = corp["allocation"].as_array().unwrap();
        let members: std::collections::BTreeSet<&str> = rows
            .iter()
            .map(|r| r["account"].as_str().unwrap())
            .collect();
        assert_eq!(
            members.into_iter().collect::<Vec<_>>(),
            ["corp", "corp-ml", "corp-web"],
            "seed {seed}: corp's allocation names its members (lab pays for itself)"
        );
        let tags: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r["tag"].as_str().unwrap()).collect();
        assert!(
            tags.len() >= 3,
            "seed {seed}: cells by project, and untagged: {tags:?}"
        );
        let total: Decimal = rows.iter().map(|r| dec(&r["total"])).sum();
        assert_eq!(total, dec(&corp["total"]), "seed {seed}");
        assert!(
            serde_json::to_string(corp)
                .unwrap()
                .contains("reserved_usage"),
            "seed {seed}: corp-web's reservation covers its members"
        );
    }
}
on_both!(payers_close_to_the_offline_invoices);

fn usage(id: &str, account: &str, start: i64, hours: i64) -> String {
    serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
        "subject":account,"data":{"lease":"L1","resource":"r1","sku":"gpu.o",
        "start":rfc(start),"end":rfc(start + hours * 3600),"quantity":"1"}})
    .to_string()
}

const MOVE_BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.o"]
tiers = [ { up_to_hours = 10, rate_per_hour = "30.00" }, { rate_per_hour = "20.00" } ]

[[accounts]]
id = "corp"

[[accounts]]
id = "team"
"#;

/// Over the API: `team` pays for itself in November (its own invoice, 8 h at 30.00); moved
/// under `corp` with `pays = "parent"` on 2 December (an `accounts` term, a command), its
/// December usage pools with corp's (12 h together: 10 at 30.00 and 2 at 20.00) on corp's
/// invoice, and it gets no invoice; November's invoices and numbers stay as issued, and no
/// adjustment is pending for them. A move into a cycle is a 4xx naming the cycle.
async fn a_move_reaches_only_the_periods_not_yet_closed(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(MOVE_BOOK).await;
    t.account("corp").await;
    t.account("team").await;
    let nov = [
        usage("n1", "team", NOV_1 + 3600, 8),
        usage("n2", "corp", NOV_1 + 86_400, 1),
    ];
    t.ingest(&nov).await;
    let (s, issued) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{issued}");
    let totals: Vec<(String, String)> = issued
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["account"].as_str().unwrap().to_string(),
                i["total"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        totals,
        [
            ("corp".to_string(), "30.00".to_string()),
            ("team".to_string(), "240.00".to_string())
        ]
    );
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/team/terms/accounts/team",
            r#"{"parent":"corp","pays":"parent"}"#,
        )
        .await;
    assert!(s.is_success(), "{s}: {v}");
    // A cycle is refused, naming it: a 409 from the accounts route.
    let (s, v) = t
        .admin("PATCH", "/v1/admin/accounts/corp", r#"{"parent":"team"}"#)
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v.to_string().contains("corp -> team -> corp"), "{v}");
    const DEC_1: i64 = NOV_1 + WINDOW;
    t.ingest(&[
        usage("d1", "team", DEC_1 + 3600, 6),
        usage("d2", "corp", DEC_1 + 86_400, 6),
    ])
    .await;
    let (s, v) = t
        .admin("GET", "/v1/admin/adjustments?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let t = t.at(JAN_2_2027_MS);
    let (s, issued) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-12", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{issued}");
    let invoices = issued.as_array().unwrap();
    assert_eq!(invoices.len(), 1, "{issued}");
    let corp = &invoices[0];
    assert_eq!(corp["account"], "corp");
    assert_eq!(corp["total"], "340.00", "{corp}");
    let (s, list) = t
        .admin("GET", "/v1/admin/exports/invoices?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{list}");
    assert!(list.to_string().contains("240.00"), "{list}");
}
on_both!(a_move_reaches_only_the_periods_not_yet_closed);

/// Over the API, a move scheduled before anything is closed: `team` pays for itself; on
/// PATCH with `effective_from` = the instant December starts, it moves under `corp` from
/// December. November still invoices `team` on its own (8 h at 30.00 = 240.00; corp 30.00)
/// although the move was made before November closed; December pools team's 6 h with corp's
/// 6 h on corp's invoice (10 at 30.00 and 2 at 20.00 = 340.00). An instant inside a period
/// is a 400 naming the period; a move into a closed period a 409 naming it.
async fn a_move_takes_effect_from_its_period(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(MOVE_BOOK).await;
    t.account("corp").await;
    t.account("team").await;
    const DEC_1: i64 = NOV_1 + WINDOW;
    t.ingest(&[
        usage("n1", "team", NOV_1 + 3600, 8),
        usage("n2", "corp", NOV_1 + 86_400, 1),
        usage("d1", "team", DEC_1 + 3600, 6),
        usage("d2", "corp", DEC_1 + 86_400, 6),
    ])
    .await;
    let patch = |body: &'static str| t.admin("PATCH", "/v1/admin/accounts/team", body);
    let (s, v) =
        patch(r#"{"parent":"corp","pays":"parent","effective_from":"2026-12-05T00:00:00Z"}"#).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v.to_string().contains("inside period 2026-12"), "{v}");
    let (s, v) =
        patch(r#"{"parent":"corp","pays":"parent","effective_from":"2026-12-01T00:00:00Z"}"#).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["effective_from"], "2026-12", "{v}");
    // The term keeps both places: its own before December, corp's from December.
    let (s, terms) = t.admin("GET", "/v1/admin/accounts/team/terms", "").await;
    assert_eq!(s, StatusCode::OK, "{terms}");
    assert!(terms.to_string().contains(r#""from":"2026-12""#), "{terms}");
    let t = t.at(DEC_2_2026_MS);
    let totals = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["account"].as_str().unwrap().into(),
                    i["total"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let (s, nov) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{nov}");
    assert_eq!(
        totals(&nov),
        [
            ("corp".into(), "30.00".into()),
            ("team".into(), "240.00".into())
        ]
    );
    // November is closed: a move from November would change it.
    let (s, v) = t
        .admin(
            "PATCH",
            "/v1/admin/accounts/team",
            r#"{"parent":null,"effective_from":"2026-11"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v.to_string().contains("period 2026-11 is closed"), "{v}");
    let t = t.at(JAN_2_2027_MS);
    let (s, dec) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-12", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{dec}");
    assert_eq!(totals(&dec), [("corp".into(), "340.00".into())]);
    let report = t.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);
}
on_both!(a_move_takes_effect_from_its_period);

const ALLOC_BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"
allocation_tag = "project"

[skus."gpu.o"]
tiers = [ { up_to_hours = 10, rate_per_hour = "30.00" }, { rate_per_hour = "20.00" } ]
"#;

/// Over the API: `corp` created as a root, `ml` and `web` created under it with
/// `pays = "parent"`, `solo` alone. November: ml 8 h, web 4 h, corp 1 h (13 h pooled: 10 at
/// 30.00, 3 at 20.00 = 360.00). `GET /v1/allocation`: corp's key sees every cell, adding up to
/// 360.00; by account the three rows are corp 1 h, ml 8 h and web 4 h of the pooled hours
/// (each hour of the walk shared by the keys running then); ml's key sees only its own row,
/// and naming corp or web is a 404; the admin names the account. A member's balance counts
/// its own part; its cost/current is a 409 naming its payer. After the close the same rows
/// come from the issued invoice (`status` `issued`).
async fn allocation_is_seen_by_scope(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(ALLOC_BOOK).await;
    let corp = t.account("corp").await;
    let create = |id: &'static str| {
        let t = &t;
        async move {
            let (s, v) = t
                .call(
                    "POST",
                    "/v1/admin/accounts",
                    Some(ADMIN),
                    "application/json",
                    format!(r#"{{"id":"{id}","parent":"corp","pays":"parent"}}"#),
                )
                .await;
            assert_eq!(s, StatusCode::CREATED, "{v}");
            assert_eq!(v["parent"], "corp");
            v["api_key"].as_str().unwrap().to_string()
        }
    };
    let ml = create("ml").await;
    let _web = create("web").await;
    let solo = t.account("solo").await;
    // An unknown parent is a 404 naming it.
    let (s, v) = t
        .call(
            "POST",
            "/v1/admin/accounts",
            Some(ADMIN),
            "application/json",
            r#"{"id":"x","parent":"nobody"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v.to_string().contains("nobody"), "{v}");
    t.ingest(&[
        usage("a1", "ml", NOV_1 + 3600, 8),
        usage("a2", "web", NOV_1 + 86_400, 4),
        usage("a3", "corp", NOV_1 + 2 * 86_400, 1),
        usage("a4", "solo", NOV_1 + 2 * 86_400, 2),
    ])
    .await;
    let (s, v) = get(&t, &corp, "&group_by=account").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "provisional");
    assert_eq!(v["invoice_total"], "360.00", "{v}");
    assert_eq!(v["total"], "360.00", "{v}");
    let rows = account_totals(&v);
    let accounts: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(accounts, ["corp", "ml", "web"], "{v}");
    let (s, mine) = get(&t, &ml, "&group_by=account").await;
    assert_eq!(s, StatusCode::OK, "{mine}");
    assert_eq!(mine["payer"], "corp");
    assert_eq!(mine["invoice_total"], Value::Null, "{mine}");
    assert_eq!(mine["rows"].as_array().unwrap().len(), 1, "{mine}");
    assert_eq!(mine["rows"][0]["account"], "ml");
    let ml_total = rows.iter().find(|r| r.0 == "ml").unwrap().1.clone();
    assert_eq!(mine["total"], ml_total.as_str());
    for other in ["corp", "web", "solo"] {
        let (s, v) = get(&t, &ml, &format!("&account={other}")).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "ml reads {other}: {v}");
    }
    let (s, v) = get(&t, &solo, "").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["rows"][0]["account"], "solo");
    assert_eq!(v["total"], "60.00", "{v}");
    let (s, v) = get(&t, ADMIN, "").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = get(&t, ADMIN, "&account=web&group_by=tag").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["rows"][0]["tag"], "", "{v}");
    assert_eq!(v["total"], "360.00", "{v}");
    let (s, v) = get(&t, &corp, "&group_by=project").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // A member's own cost (in November): its balance counts its part; its cost/current
    // names its payer.
    let t = t.at((NOV_1 + 20 * 86_400) * 1000);
    let (s, v) = t
        .call("GET", "/v1/balance", Some(&ml), "application/json", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["period_cost"], ml_total.as_str(), "{v}");
    let (s, v) = t
        .call("GET", "/v1/cost/current", Some(&ml), "application/json", "")
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v.to_string().contains("corp"), "{v}");
    // Closed: the issued invoice's allocation, the same rows.
    let t = t.at(DEC_2_2026_MS);
    let (s, v) = t
        .admin("POST", "/v1/admin/invoices/close?period=2026-11", "")
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = get(&t, &corp, "&group_by=account").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "issued");
    assert_eq!(account_totals(&v), rows);
}
on_both!(allocation_is_seen_by_scope);

/// An allocation answer's rows as (account, total).
fn account_totals(v: &Value) -> Vec<(String, String)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["account"].as_str().unwrap().to_string(),
                r["total"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `GET /v1/allocation?period=2026-11` with `q` appended, as `token`.
async fn get(t: &TestApp, token: &str, q: &str) -> (StatusCode, Value) {
    let uri = format!("/v1/allocation?period=2026-11{q}");
    t.call("GET", &uri, Some(token), "application/json", "")
        .await
}

/// Through Kafka (tansu) into PostgreSQL: the organization workload (tags and egress leases
/// included) closes November to `gpubill rate`'s invoices; `lab-a` then moves to pay for
/// itself (`PATCH`, a command); its December usage is invoiced to it alone while November
/// keeps lab as its payer (nothing to adjust, `verify` finds nothing); a replay of the usage
/// and commands topics into an empty database rebuilds every table byte for byte, both
/// periods' invoices and the move included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_through_kafka_replays_identically() {
    let (topic, topics) = replayable_topics().await;
    let events = workload(99, 300);
    let produced = produce_redelivered_by_subject(&topic, &events, 99).await;
    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(BOOK).await;
    for id in ACCOUNTS {
        a.account(id).await;
    }
    consume_until_offsets(&a, &topic, events.len() as i64, Some(produced)).await;
    // Scheduled before November closes, effective from December.
    let (s, v) = a
        .admin(
            "PATCH",
            "/v1/admin/accounts/lab-a",
            r#"{"parent":"lab","effective_from":"2026-12"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["pays"], "self");
    let closed = a.close("2026-11").await;
    let issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(BOOK, &events, "2026-11"));
    const DEC_1: i64 = NOV_1 + WINDOW;
    let december = [
        usage("d1", "lab-a", DEC_1 + 3600, 3),
        usage("d2", "lab", DEC_1 + 7200, 2),
    ];
    let more = produce_redelivered_by_subject(&topic, &december, 5).await;
    let total = (events.len() + december.len()) as i64;
    consume_at(&a, &topic, total, Some(produced + more), JAN_2_2027_MS).await;
    let a = a.at(JAN_2_2027_MS);
    let closed = a.close("2026-12").await;
    let payers: Vec<&str> = closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["account"].as_str().unwrap())
        .collect();
    assert!(
        payers.contains(&"lab-a"),
        "lab-a pays for itself in December: {closed}"
    );
    let lab_a = closed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "lab-a")
        .unwrap();
    assert_eq!(lab_a["subtotal"], "90.00", "3 h at 30.00: {lab_a}");
    // `gpubill rate` with the move in the price book says the same for December.
    let moved_book = BOOK.replace(
        "id = \"lab-a\"\nparent = \"lab\"\npays = \"parent\"\n",
        "id = \"lab-a\"\nparent = \"lab\"\npays = \"parent\"\nmoves = [ { from = \"2026-12\", parent = \"lab\" } ]\n",
    );
    assert_ne!(moved_book, BOOK);
    let all: Vec<String> = events
        .iter()
        .cloned()
        .chain(december.iter().cloned())
        .collect();
    let offline = offline_invoices(&moved_book, &all, "2026-12");
    let offline_lab_a = offline.iter().find(|i| i["account"] == "lab-a").unwrap();
    assert_eq!(&section6(lab_a), offline_lab_a);
    let report = a.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);

    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    relay_all(&a).await;
    billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), &topic, &topics.commands),
        || JAN_2_2027_MS + 60_000,
    )
    .await
    .unwrap();
    let (original, replayed) = (
        projections(&a.state.store).await,
        projections(&b.state.store).await,
    );
    assert!(original.iter().any(|r| r.contains("lab-a")));
    assert_eq!(original, replayed);
}
