//! Quotas, holds and synchronous authorization (issue 5, first part), on SQLite and
//! PostgreSQL.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// 36 CNY an hour: one unit for 100 s holds exactly 1.00.
const BOOK: &str = "currency = \"CNY\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"36\"\n[skus.\"gpu.a100\"]\ntiers = [ { up_to_hours = 10, rate_per_hour = \"18\" }, { rate_per_hour = \"9\" } ]\n";

/// An app whose clock the test moves.
fn with_clock(t: TestApp, now: Arc<AtomicI64>) -> TestApp {
    let mut state = t.state.clone();
    state.clock = Arc::new(move || now.load(Ordering::SeqCst));
    TestApp {
        app: billing_api::router(state.clone()),
        state,
        url: t.url,
    }
}

async fn setup(db: Db, quotas: Value) -> (TestApp, Arc<AtomicI64>, String) {
    let now = Arc::new(AtomicI64::new(DEC_2_2026_MS));
    let t = with_clock(TestApp::fresh(db).await, now.clone());
    t.put_pricebook(BOOK).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .admin("PUT", "/v1/admin/accounts/acme/quotas", quotas.to_string())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    (t, now, key)
}

async fn authorize(t: &TestApp, body: Value) -> (StatusCode, Value) {
    t.call(
        "POST",
        "/v1/authorize",
        Some(INGEST),
        "application/json",
        body.to_string(),
    )
    .await
}

fn one_gpu_100_s() -> Value {
    json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 100, "ttl_seconds": 60})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_authorizations_against_a_balance_for_ten_allow_exactly_ten() {
    for db in BOTH {
        let (t, now, key) = setup(db, json!({"prepaid_balance": "10.00"})).await;
        let t = Arc::new(t);
        let calls: Vec<_> = (0..50)
            .map(|_| {
                let t = t.clone();
                tokio::spawn(async move { authorize(&t, one_gpu_100_s()).await })
            })
            .collect();
        let mut allowed = Vec::new();
        for c in calls {
            let (s, v) = c.await.unwrap();
            assert_eq!(s, StatusCode::OK, "{v}");
            match v["decision"].as_str() {
                Some("allowed") => {
                    assert_eq!(v["amount"], "1.00", "{v}");
                    allowed.push(v["hold"].as_str().unwrap().to_string());
                }
                Some("denied") => {
                    assert_eq!(v["quota"], "prepaid_balance", "{v}");
                    assert_eq!(
                        (v["used"].as_str(), v["limit"].as_str()),
                        (Some("10.00"), Some("10.00")),
                        "{v}"
                    );
                }
                _ => panic!("{v}"),
            }
        }
        assert_eq!(allowed.len(), 10, "{db:?}");
        // The customer sees its balance and holds.
        let (_, b) = t.get("/v1/balance", &key).await;
        assert_eq!(
            (b["held"].as_str(), b["available"].as_str()),
            (Some("10.00"), Some("0.00")),
            "{b}"
        );
        assert_eq!(b["holds"].as_array().unwrap().len(), 10);

        // Releasing one lets exactly one more through.
        let (s, v) = t
            .call(
                "POST",
                &format!("/v1/holds/{}/release", allowed[0]),
                Some(INGEST),
                "application/json",
                "",
            )
            .await;
        assert_eq!(
            (s, v["status"].as_str()),
            (StatusCode::OK, Some("released")),
            "{v}"
        );
        let again: Vec<_> = (0..5)
            .map(|_| {
                let t = t.clone();
                tokio::spawn(async move { authorize(&t, one_gpu_100_s()).await.1 })
            })
            .collect();
        let mut n = 0;
        for a in again {
            n += (a.await.unwrap()["decision"] == "allowed") as usize;
        }
        assert_eq!(n, 1, "{db:?}");
        // A released hold cannot be released again.
        let (s, _) = t
            .call(
                "POST",
                &format!("/v1/holds/{}/release", allowed[0]),
                Some(INGEST),
                "application/json",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT);

        // An extended hold outlives the others; expired ones free their amount by themselves.
        let (s, v) = t
            .call(
                "POST",
                &format!("/v1/holds/{}/extend", allowed[1]),
                Some(INGEST),
                "application/json",
                "{\"ttl_seconds\":600}",
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        now.fetch_add(61_000, Ordering::SeqCst);
        let (_, b) = t.get("/v1/balance", &key).await;
        assert_eq!(
            (b["held"].as_str(), b["available"].as_str()),
            (Some("1.00"), Some("9.00")),
            "{b}"
        );
        let mut n = 0;
        for _ in 0..12 {
            n += (authorize(&t, one_gpu_100_s()).await.1["decision"] == "allowed") as usize;
        }
        assert_eq!(n, 9, "{db:?}");
        let (s, _) = t
            .call(
                "POST",
                &format!("/v1/holds/{}/extend", allowed[2]),
                Some(INGEST),
                "application/json",
                "",
            )
            .await;
        assert_eq!(
            s,
            StatusCode::CONFLICT,
            "an expired hold cannot be extended"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spend_limit_concurrency_and_gpu_hours_deny_naming_the_quota() {
    for db in BOTH {
        let (t, _, _) = setup(
            db,
            json!({"spend_limit": "100", "max_concurrent": {"gpu.h100-80g": "8"}, "gpu_hours": {"gpu.a100": "10"}}),
        )
        .await;
        // 8 GPUs for an hour: 288.00 > 100 spend limit.
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": 8, "seconds": 3600}),
        )
        .await;
        assert_eq!(
            (v["decision"].as_str(), v["quota"].as_str()),
            (Some("denied"), Some("spend_limit")),
            "{v}"
        );
        assert_eq!(v["requested"], "288.00", "{v}");
        // 6 then 3 GPUs for 60 s (3.60 and 1.80): the second crosses 8 concurrent.
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": 6, "seconds": 60}),
        )
        .await;
        assert_eq!(v["decision"], "allowed", "{v}");
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": 3, "seconds": 60}),
        )
        .await;
        assert_eq!(
            (v["quota"].as_str(), v["used"].as_str(), v["limit"].as_str()),
            (Some("max_concurrent.gpu.h100-80g"), Some("6"), Some("8")),
            "{v}"
        );
        // The spend limit counts live holds: 3.60 held + 144.00 (4 a100 x 2 h at 18/h) > 100.
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.a100", "quantity": 4, "seconds": 7200}),
        )
        .await;
        assert_eq!(
            (
                v["quota"].as_str(),
                v["used"].as_str(),
                v["requested"].as_str(),
                v["limit"].as_str()
            ),
            (
                Some("spend_limit"),
                Some("3.60"),
                Some("144.00"),
                Some("100.00")
            ),
            "{v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_hours_count_live_holds() {
    for db in BOTH {
        let (t, _, _) = setup(db, json!({"gpu_hours": {"gpu.a100": "10"}})).await;
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.a100", "quantity": 4, "seconds": 7200}),
        )
        .await;
        assert_eq!(v["decision"], "allowed", "{v}");
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.a100", "quantity": 1, "seconds": 10800}),
        )
        .await;
        assert_eq!(
            (
                v["quota"].as_str(),
                v["used"].as_str(),
                v["requested"].as_str(),
                v["limit"].as_str()
            ),
            (Some("gpu_hours.gpu.a100"), Some("8"), Some("3"), Some("10")),
            "{v}"
        );
        let (_, v) = authorize(
            &t,
            json!({"account": "acme", "sku": "gpu.a100", "quantity": 1, "seconds": 7200}),
        )
        .await;
        assert_eq!(v["decision"], "allowed", "exactly up to the limit: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_authorizations_and_quotas_get_clear_4xx_errors() {
    for db in BOTH {
        let (t, _, key) = setup(db, json!({"prepaid_balance": "10"})).await;
        let cases = [
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "-1", "seconds": 100}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "quantity",
            ),
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1e9", "seconds": 100}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "quantity",
            ),
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": 1000000000, "seconds": 100}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "quantity",
            ),
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 0}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "seconds",
            ),
            (
                json!({"account": "acme", "sku": "tpu.v5", "quantity": "1", "seconds": 100}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "tpu.v5",
            ),
            (
                json!({"account": "nobody", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 100}),
                StatusCode::NOT_FOUND,
                "nobody",
            ),
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 100, "ttl_seconds": 0}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "ttl_seconds",
            ),
            (
                json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "secs": 100}),
                StatusCode::BAD_REQUEST,
                "secs",
            ),
        ];
        for (body, status, names) in cases {
            let (s, v) = authorize(&t, body.clone()).await;
            assert_eq!(s, status, "{body} -> {v}");
            assert!(
                v["message"].as_str().unwrap().contains(names),
                "{body} -> {v}"
            );
        }
        let (s, v) = t
            .call(
                "POST",
                "/v1/holds/hold_nope/release",
                Some(INGEST),
                "application/json",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
        // A customer key authorizes only within its scope (issue 27; tests/keys.rs): another
        // tenant's account is a 404, as an unknown one.
        let mut other = one_gpu_100_s();
        other["account"] = json!("beta");
        let (s, v) = t
            .call(
                "POST",
                "/v1/authorize",
                Some(&key),
                "application/json",
                other.to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "outside the key's scope: {v}");
        assert_eq!(v["message"], "unknown account \"beta\"");
        for (body, names) in [
            (json!({"prepaid_balance": "-5"}), "prepaid_balance"),
            (json!({"spend_limit": "0"}), "spend_limit"),
            (json!({"warn_at": "1.5"}), "warn_at"),
            (
                json!({"max_concurrent": {"gpu.h100-80g": "-1"}}),
                "max_concurrent.gpu.h100-80g",
            ),
            (json!({"prepaid": "5"}), "prepaid"),
        ] {
            let (s, v) = t
                .admin("PUT", "/v1/admin/accounts/acme/quotas", body.to_string())
                .await;
            assert!(
                s == StatusCode::UNPROCESSABLE_ENTITY || s == StatusCode::BAD_REQUEST,
                "{body} -> {s} {v}"
            );
            assert!(
                v["message"].as_str().unwrap().contains(names),
                "{body} -> {v}"
            );
        }
        let (s, _) = t
            .admin("PUT", "/v1/admin/accounts/nobody/quotas", "{}")
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_and_quotas_survive_a_restart() {
    for db in BOTH {
        let (t, now, _) = setup(db, json!({"prepaid_balance": "3.00"})).await;
        for _ in 0..2 {
            assert_eq!(
                authorize(&t, one_gpu_100_s()).await.1["decision"],
                "allowed"
            );
        }
        let url = t.shutdown().await;
        let t = with_clock(TestApp::open(&url).await, now);
        let (_, v) = authorize(&t, one_gpu_100_s()).await;
        assert_eq!(v["decision"], "allowed", "{v}");
        let (_, v) = authorize(&t, one_gpu_100_s()).await;
        assert_eq!(
            (v["decision"].as_str(), v["used"].as_str()),
            (Some("denied"), Some("3.00")),
            "{v}"
        );
        // The quotas were recorded as a command, for replay.
        let commands = t.state.store.log().outbox_pending(100).await.unwrap();
        assert!(
            commands
                .iter()
                .any(|r| r.payload.contains("\"quotas.set\"") && r.payload.contains("\"3.00\"")),
            "{commands:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_for_the_lease_captures_its_hold() {
    for db in BOTH {
        let (t, _, key) = setup(db, json!({"prepaid_balance": "10.00"})).await;
        let mut body = one_gpu_100_s();
        body["lease"] = json!("L-7");
        let (_, v) = authorize(&t, body).await;
        assert_eq!(v["decision"], "allowed", "{v}");
        let mut other = one_gpu_100_s();
        other["lease"] = json!("L-8");
        assert_eq!(authorize(&t, other).await.1["decision"], "allowed");
        // 50 s of L-7 arrive (2026-12-01, inside the open period): its hold is captured and
        // the usage (0.50) counts instead; L-8's hold stays.
        let event = json!({"specversion": "1.0", "id": "u1", "source": "node/1", "type": "gpu.usage", "subject": "acme",
            "data": {"lease": "L-7", "resource": "gpu0", "sku": "gpu.h100-80g", "start": "2026-12-01T00:00:00Z", "end": "2026-12-01T00:00:50Z"}});
        t.ingest(&[event.to_string()]).await;
        let (_, b) = t.get("/v1/balance", &key).await;
        let holds: Vec<&str> = b["holds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["lease"].as_str().unwrap())
            .collect();
        assert_eq!(holds, ["L-8"], "{b}");
        assert_eq!(
            (
                b["period_cost"].as_str(),
                b["held"].as_str(),
                b["available"].as_str()
            ),
            (Some("0.50"), Some("1.00"), Some("8.50")),
            "{b}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_nodes_against_1000_gpu_hours_cross_warn_and_limit_once_within_a_batch() {
    for db in BOTH {
        let (mut t, now, key) = setup(db, json!({"gpu_hours": {"gpu.h100-80g": "1000"}})).await;
        // 8 nodes x 8 GPUs report every 10 s from 2026-11-02; each batch is 5 minutes of
        // reports (240 events, 5.33 GPU-hours): the batch lag.
        let start = 1_793_577_600; // 2026-11-02T00:00:00Z
        let batch_seconds = 300;
        let per_batch_hours =
            rust_decimal::Decimal::new(64 * batch_seconds, 0) / rust_decimal::Decimal::from(3600);
        let mut at = start;
        // 1000 GPU-hours at 64 GPUs is 15 h 37.5 min; go on past it.
        while at < start + 17 * 3600 {
            let events: Vec<String> = (0..batch_seconds / 10)
                .flat_map(|i| (0..8).map(move |n| node_report(n, at + i * 10)))
                .collect();
            t.ingest(&events).await;
            at += batch_seconds;
            // A restart between the warning and the limit keeps the decision state: the
            // warning is not emitted again.
            if at == start + 14 * 3600 {
                let url = t.shutdown().await;
                t = with_clock(TestApp::open(&url).await, now.clone());
            }
        }
        let (_, v) = t.get("/v1/quota/decisions", &key).await;
        let list = v["decisions"].as_array().unwrap();
        let kinds: Vec<&str> = list.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["warn", "limit"], "{db:?}: {v}");
        assert_crossed_within_a_batch(list, per_batch_hours);
        assert_eq!(list[1]["quota"], "gpu_hours.gpu.h100-80g");
        assert_eq!(list[1]["limit"], "1000");
        assert!(
            list[1]["position"]
                .as_array()
                .is_some_and(|p| !p.is_empty()),
            "{}",
            list[1]
        );
        // Relayed through the outbox to the quota topic.
        let outbox = t.state.store.log().outbox_pending(1000).await.unwrap();
        assert_eq!(
            outbox
                .iter()
                .filter(|r| r.topic == "billing.quota.v1")
                .count(),
            2
        );
        // Admin filter; another account sees nothing of acme's.
        let (_, v) = t
            .get("/v1/quota/decisions?kind=limit&account=acme", ADMIN)
            .await;
        assert_eq!(v["decisions"].as_array().unwrap().len(), 1, "{v}");
        let other = t.account("beta").await;
        let (_, v) = t.get("/v1/quota/decisions", &other).await;
        assert_eq!(v["decisions"].as_array().unwrap().len(), 0, "{v}");
        let (s, _) = t.get("/v1/quota/decisions?kind=maybe", ADMIN).await;
        assert_eq!(s, StatusCode::BAD_REQUEST);

        // Raising the quota moves the level back down: one clear, then nothing more.
        let (s, _) = t
            .admin(
                "PUT",
                "/v1/admin/accounts/acme/quotas",
                json!({"gpu_hours": {"gpu.h100-80g": "5000"}}).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::OK);
        for _ in 0..2 {
            let events: Vec<String> = (0..8).map(|n| node_report(n, at)).collect();
            t.ingest(&events).await;
            at += 10;
        }
        let (_, v) = t.get("/v1/quota/decisions", &key).await;
        let kinds: Vec<&str> = v["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["warn", "limit", "clear"], "{db:?}: {v}");
    }
}

/// Reservations, a small tier, off-peak, egress, credits: everything a rating can depend on.
const RICH_BOOK: &str = r#"currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100-80g"]
minimum_seconds = 60
spot_rate_per_hour = "14.4"
tiers = [ { up_to_hours = 2, rate_per_hour = "36" }, { rate_per_hour = "30" } ]
[skus."vgpu.h100-quarter"]
rate_per_hour = "9.6"
spot_rate_per_hour = "3.6"
[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"
[egress.internet]
tiers = [ { up_to_gb = 1, rate_per_gb = "0.00" }, { rate_per_gb = "0.10" } ]
[tax]
rate = "0.06"
[[reservations]]
account = "acme"
sku = "gpu.h100-80g"
quantity = "2"
from = "2026-12-01T00:00:00+08:00"
to = "2027-01-01T00:00:00+08:00"
rate_per_hour = "24"
[[credits]]
account = "acme"
amount = "40.00"
"#;

/// Random usage and egress of `acme` (and of `beta`, whose batches must not move acme's
/// figure) starting at `base`.
fn random_events(seed: u64, n: usize, base: i64, prefix: &str) -> Vec<String> {
    let mut x = seed;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let t = |s: i64| billing_core::timestamp::format_secs(s);
    (0..n)
        .map(|i| {
            let account = if next(5) == 0 { "beta" } else { "acme" };
            let from = base + next(40_000) as i64;
            if next(8) == 0 {
                return json!({"specversion": "1.0", "id": format!("{prefix}e{i}"), "source": "node/x", "type": "gpu.egress",
                    "subject": account, "time": t(from), "data": {"dest": "internet", "bytes": next(400_000_000) }})
                .to_string();
            }
            let (sku, q) = if next(3) == 0 {
                ("vgpu.h100-quarter", "0.25")
            } else {
                ("gpu.h100-80g", ["1", "2", "4"][next(3) as usize])
            };
            let class = if next(4) == 0 { "spot" } else { "on_demand" };
            json!({"specversion": "1.0", "id": format!("{prefix}u{i}"), "source": "node/x", "type": "gpu.usage", "subject": account,
                "data": {"lease": format!("L{}", next(4)), "resource": format!("r{}", next(3)), "sku": sku, "class": class,
                "quantity": q, "start": t(from), "end": t(from + 5 + next(900) as i64)}})
            .to_string()
        })
        .collect()
}

/// A fresh rating of acme's December from the store's ledger (credits left over from issued
/// invoices applied): what `/v1/cost/current` must equal.
async fn fresh_december(t: &TestApp) -> Value {
    let store = &t.state.store;
    let (version, period) = store
        .admin()
        .pricebook_for("2026-12")
        .await
        .unwrap()
        .unwrap();
    let consumed: rust_decimal::Decimal = store
        .finance()
        .invoices(Some("acme"), None)
        .await
        .unwrap()
        .iter()
        .map(|i| i.invoice.credit)
        .sum();
    let credit = (version.book.credit_total("acme") - consumed).max(rust_decimal::Decimal::ZERO);
    let ledger = store.log().account_ledger("acme").await.unwrap();
    let ctx = billing_core::rating::RatingContext::new(&version.book, period);
    let rated = billing_core::rating::rate_account(&ctx, "acme", Some(&ledger), credit).unwrap();
    serde_json::to_value(rated.invoice).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisional_cost_is_kept_per_batch_and_equals_a_fresh_rating() {
    for db in BOTH {
        let now = Arc::new(AtomicI64::new(DEC_2_2026_MS));
        let t = with_clock(TestApp::fresh(db).await, now.clone());
        t.put_pricebook(RICH_BOOK).await;
        let key = t.account("acme").await;
        // November usage first (its close later consumes credits), then December's in random
        // batches with redeliveries.
        let november = random_events(7, 60, 1_793_500_000, "nov-");
        t.ingest(&november).await;
        let december = random_events(11, 400, 1_796_054_400, "dec-"); // 2026-12-01T00:00+08:00
        let mut sent: Vec<String> = Vec::new();
        let mut i = 0;
        let mut batches = 0;
        let mut last_total = String::new();
        let mut totals_moved = 0;
        while i < december.len() {
            let n = 1 + (i * 7919 % 37);
            let mut batch: Vec<String> = december[i..(i + n).min(december.len())].to_vec();
            if i > 0 {
                batch.push(december[i * 31 % i].clone()); // a redelivery
            }
            i += n;
            sent.extend(batch.iter().cloned());
            t.ingest(&batch).await;
            batches += 1;
            let (s, cost) = t.get("/v1/cost/current", &key).await;
            assert_eq!(s, StatusCode::OK, "{cost}");
            // Stored by the batch (it has the batch's position), equal to a fresh rating and
            // to `gpubill rate` over everything sent so far.
            assert!(cost["position"].is_array(), "{cost}");
            assert_eq!(
                cost["invoice"],
                fresh_december(&t).await,
                "{db:?} batch {batches}"
            );
            let all: Vec<String> = november.iter().chain(&sent).cloned().collect();
            let offline = offline_invoices(RICH_BOOK, &all, "2026-12");
            let acme = offline.iter().find(|v| v["account"] == "acme").unwrap();
            assert_eq!(&cost["invoice"], acme, "{db:?} batch {batches}");
            let total = cost["invoice"]["total"].as_str().unwrap().to_string();
            totals_moved += (total != last_total) as usize;
            last_total = total;
        }
        assert!(
            batches > 15 && totals_moved > 10,
            "{batches} {totals_moved}"
        );
        let (_, before) = t.get("/v1/cost/current", &key).await;
        let tiers_used = before["invoice"]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["component"] == "on_demand")
            .count();
        assert!(tiers_used >= 2, "{before}");

        // A new price book version re-rates the stored figure in its own transaction: no
        // batch needed, the position stays.
        t.put_pricebook(&RICH_BOOK.replace("\"30\"", "\"27\""))
            .await;
        let (_, after) = t.get("/v1/cost/current", &key).await;
        assert_eq!(after["position"], before["position"]);
        assert_eq!(after["invoice"], fresh_december(&t).await);
        assert_ne!(after["invoice"]["total"], before["invoice"]["total"]);

        // Closing November consumes credits; December's figure is re-rated with what is left.
        let closed = t.close("2026-11").await;
        let nov_credit: rust_decimal::Decimal = closed
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["account"] == "acme")
            .map(|i| i["credit"].as_str().unwrap().parse().unwrap())
            .unwrap();
        assert!(nov_credit > rust_decimal::Decimal::ZERO, "{closed}");
        let (_, closed_after) = t.get("/v1/cost/current", &key).await;
        assert_eq!(closed_after["invoice"], fresh_december(&t).await);
        assert_ne!(
            closed_after["invoice"]["credit"],
            after["invoice"]["credit"]
        );
        // The closed period's row gave way to its invoice.
        let nov = t
            .state
            .store
            .finance()
            .provisional("acme", "2026-11", DEC_2_2026_MS)
            .await
            .unwrap()
            .unwrap();
        assert!(nov.position.is_null(), "{nov:?}");
        // The balance and authorization read the same figure.
        let (_, b) = t.get("/v1/balance", &key).await;
        let total: rust_decimal::Decimal = closed_after["invoice"]["total"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(b["period_cost"].as_str().unwrap(), format!("{:.2}", total));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_counts_running_usage_after_its_hold_is_captured() {
    for db in BOTH {
        let (t, now, _) = setup(db, json!({"max_concurrent": {"gpu.h100-80g": "8"}})).await;
        let eight = json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "8", "seconds": 600, "lease": "L-1"});
        let one = json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 60});
        assert_eq!(authorize(&t, eight).await.1["decision"], "allowed");
        // The lease's usage arrives (until 10 s before now): the hold is captured, and the 8
        // GPUs go on counting as running.
        let event = json!({"specversion": "1.0", "id": "u1", "source": "node/1", "type": "gpu.usage", "subject": "acme",
            "data": {"lease": "L-1", "resource": "gpus", "sku": "gpu.h100-80g", "quantity": "8",
            "start": "2026-12-01T23:58:00Z", "end": "2026-12-01T23:59:50Z"}});
        t.ingest(&[event.to_string()]).await;
        let (_, v) = authorize(&t, one.clone()).await;
        assert_eq!(
            (
                v["decision"].as_str(),
                v["quota"].as_str(),
                v["used"].as_str()
            ),
            (
                Some("denied"),
                Some("max_concurrent.gpu.h100-80g"),
                Some("8")
            ),
            "{db:?}: {v}"
        );
        // Two minutes without a report: the lease no longer counts as running.
        now.fetch_add(
            (billing_store::RUNNING_WINDOW_S - 10 + 1) * 1000,
            Ordering::SeqCst,
        );
        let (_, v) = authorize(&t, one).await;
        assert_eq!(v["decision"], "allowed", "{db:?}: {v}");
    }
}

/// Two engine processes (two stores, two hold caches) on one PostgreSQL database: each sees
/// the holds the other placed and released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_sharing_postgres_see_each_others_holds() {
    let (a, now, _) = setup(Db::Postgres, json!({"prepaid_balance": "10.00"})).await;
    let b = with_clock(TestApp::open(&a.url).await, now.clone());
    let mut held = Vec::new();
    for i in 0..10 {
        let t = if i % 2 == 0 { &a } else { &b };
        let (_, v) = authorize(t, one_gpu_100_s()).await;
        assert_eq!(v["decision"], "allowed", "call {i}: {v}");
        held.push(v["hold"].as_str().unwrap().to_string());
    }
    for t in [&a, &b] {
        let (_, v) = authorize(t, one_gpu_100_s()).await;
        assert_eq!(
            (v["decision"].as_str(), v["used"].as_str()),
            (Some("denied"), Some("10.00")),
            "{v}"
        );
    }
    // b releases a hold a placed: a lets exactly one more through.
    let (s, v) = b
        .call(
            "POST",
            &format!("/v1/holds/{}/release", held[0]),
            Some(INGEST),
            "application/json",
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        authorize(&a, one_gpu_100_s()).await.1["decision"],
        "allowed"
    );
    assert_eq!(authorize(&b, one_gpu_100_s()).await.1["decision"], "denied");
}

/// Found by the simulation (issue 14): two quota settings of one account in one millisecond
/// got one command id (and one wallet correction reference), so `gpubill replay` kept the
/// first and dropped the second. Each setting is now at least a millisecond after the last:
/// distinct ids, both corrections, and replaying the commands in order ends where the engine
/// did.
#[tokio::test]
async fn quota_settings_in_one_millisecond_are_distinct_commands() {
    for db in BOTH {
        // The clock stands still.
        let (t, _, _) = setup(db, json!({"prepaid_balance": "10.00"})).await;
        for body in [
            json!({"prepaid_balance": "20.00"}),
            json!({"prepaid_balance": "5.00", "gpu_hours": {"gpu": "3"}}),
        ] {
            let (s, v) = t
                .admin("PUT", "/v1/admin/accounts/acme/quotas", body.to_string())
                .await;
            assert_eq!(s, StatusCode::OK, "{v}");
        }
        let commands: Vec<Value> = t
            .state
            .store
            .log()
            .outbox_pending(100)
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.payload.contains("quotas"))
            .map(|r| serde_json::from_str(&r.payload).unwrap())
            .collect();
        assert_eq!(commands.len(), 3, "{commands:?}");
        let ids: std::collections::BTreeSet<String> = commands
            .iter()
            .map(|c| {
                serde_json::from_value::<billing_store::Command>(c.clone())
                    .unwrap()
                    .id()
            })
            .collect();
        assert_eq!(ids.len(), 3, "{ids:?}");
        // Replayed in order into an empty database: the same quotas and wallet movements.
        let r = TestApp::fresh(db).await;
        for row in t.state.store.log().outbox_pending(1000).await.unwrap() {
            if row.topic == billing_store::Topics::default().commands {
                let c: billing_store::Command = serde_json::from_str(&row.payload).unwrap();
                r.state.store.log().apply_command(&c).await.unwrap();
            }
        }
        let rows = async |t: &TestApp| -> Vec<String> {
            let mut out = Vec::new();
            for q in [
                "select body || '|' || updated_at_ms from quotas",
                "select kind || '|' || amount || '|' || reference || '|' || at_ms from wallet_movements order by at_ms, reference",
            ] {
                for row in billing_store::db::query(q)
                    .fetch_all(t.state.store.pool())
                    .await
                    .unwrap()
                {
                    out.push(row.get::<String, _>(0));
                }
            }
            out
        };
        let engine = rows(&t).await;
        assert_eq!(
            engine.len(),
            4,
            "the quotas and three corrections: {engine:?}"
        );
        assert!(engine[0].contains("\"5.00\""), "{engine:?}");
        assert_eq!(engine, rows(&r).await);
    }
}
