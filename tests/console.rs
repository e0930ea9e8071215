//! The web console (issue 13) in a real headless Chromium: gpubill's HTTP server runs in this
//! process on a loopback port, seeded through the API (the worked example's price book and
//! events, a month of acme's fleet, a December so far, one dead letter, quotas), and
//! `tests/browser/console.spec.mjs` (playwright-core driving Debian's `chromium`) signs in as
//! the customer and as the admin and compares what the pages show with what the API answers
//! here: the usage chart's total, the cost to date, the limits, the invoices the admin's close
//! issues; a customer is refused the admin pages and another account's invoice.
//!
//! Without Node.js, the test's npm packages or Chromium this test fails, saying how to
//! install them (`./scripts/services.sh chromium browser-deps`); it never skips. Screenshots
//! are kept in `target/test-artifacts/console-*.png`, and one becomes `docs/console.png`, the
//! README's.

use axum::http::StatusCode;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "org_fixture.rs"]
mod org_fixture;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Node.js 20 or later (playwright-core 1.65 needs it).
fn node() -> PathBuf {
    let node = on_path("node").unwrap_or_else(|| {
        panic!(
            "Node.js is needed to drive the browser test and is not on PATH: run \
             ./scripts/services.sh browser-deps (Debian: apt-get install nodejs npm)"
        )
    });
    let out = Command::new(&node)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", node.display()));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 20,
        "Node.js {version} is too old for playwright-core (20 or later is needed)"
    );
    node
}

/// The Chromium the browser test drives: `GPUBILL_CHROMIUM`, else Debian's.
fn chromium() -> PathBuf {
    if let Some(c) = std::env::var_os("GPUBILL_CHROMIUM").filter(|c| !c.is_empty()) {
        return PathBuf::from(c);
    }
    ["chromium", "chromium-browser"]
        .iter()
        .find_map(|n| on_path(n))
        .unwrap_or_else(|| {
            panic!(
                "headless Chromium is needed for the console's browser test and is not on PATH: \
                 run ./scripts/services.sh chromium (Debian: apt-get install chromium fonts-noto-cjk)"
            )
        })
}

fn browser_dir() -> PathBuf {
    let dir = workspace().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core/package.json")
            .is_file(),
        "playwright-core is not installed in {}: run ./scripts/services.sh browser-deps (npm ci there)",
        dir.display()
    );
    dir
}

fn artifacts() -> PathBuf {
    let dir = workspace().join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 2026-11-DD as an Asia/Shanghai instant (the price book's timezone).
fn shanghai(day: u32, hour: u32) -> String {
    if hour >= 24 {
        // Midnight ending the day: the next day's 00:00 (2026-11-30 + 1 is December 1st).
        let (m, d) = if day == 30 { (12, 1) } else { (11, day + 1) };
        return format!("2026-{m:02}-{d:02}T{:02}:00:00+08:00", hour - 24);
    }
    format!("2026-11-{day:02}T{hour:02}:00:00+08:00")
}

/// A usage event of `account`: `what` is its lease, resource, sku and quantity, `span` its
/// start and end.
fn usage(id: &str, account: &str, what: [&str; 4], span: [&str; 2]) -> String {
    let [lease, resource, sku, q] = what;
    let [start, end] = span;
    json!({"specversion":"1.0","id":id,"source":format!("node/{resource}"),"type":"gpu.usage","subject":account,
        "data":{"lease":lease,"resource":resource,"sku":sku,"quantity":q,"start":start,"end":end}})
    .to_string()
}

/// A month of acme's fleet, so the chart looks like one: six H100s of a training lease and
/// two quarter vGPUs of an inference lease, a few hours a day each, less at weekends.
fn fleet() -> Vec<String> {
    let mut out = Vec::new();
    for day in 1..=30u32 {
        let weekend = matches!((day + 6) % 7, 0 | 6); // 2026-11-01 is a Sunday
        for r in 0..8u32 {
            let start = 8 + (r + day) % 6;
            let mut hours = 3 + (r * 7 + day * 3) % 9;
            if weekend {
                hours = hours.div_ceil(2);
            }
            let (lease, sku, q) = if r < 6 {
                ("L-train", "gpu.h100-80g", "1")
            } else {
                ("L-infer", "vgpu.t4-quarter", "0.25")
            };
            out.push(usage(
                &format!("f-{day}-{r}"),
                "acme",
                [lease, &format!("{lease}-{r}"), sku, q],
                [&shanghai(day, start), &shanghai(day, start + hours)],
            ));
        }
        // The training lease's 500 GB volume, all day: GB-seconds, which must never stack on
        // its GPU-seconds (issue 24.12).
        if day <= 20 {
            out.push(usage(
                &format!("v-{day}"),
                "acme",
                ["L-train", "L-train-vol", "storage.ssd", "500"],
                [&shanghai(day, 0), &shanghai(day, 24)],
            ));
        }
    }
    out
}

/// The price book of the console's test: the worked example's, with a storage sku and a
/// region in US dollars (issue 26: its invoices and prices are in its own currency).
fn console_book() -> String {
    format!(
        "{}\n[skus.\"storage.ssd\"]\nrate_per_hour = \"0.0002\"\n{REGION}",
        fixture("worked-1/pricebook.toml")
    )
}

const REGION: &str = r#"
[regions."us-west"]
currency = "USD"
timezone = "America/Los_Angeles"
[regions."us-west".skus."gpu.h100-80g"]
rate_per_hour = "3.20"
"#;

/// gamma rents an H100 in us-west for 5 hours in November: an invoice in USD.
fn regional() -> String {
    json!({"specversion":"1.0","id":"g-1","source":"node/g0","type":"gpu.usage","subject":"gamma",
        "data":{"lease":"L-g","resource":"g0","sku":"gpu.h100-80g","quantity":"1",
            "start":"2026-11-16T09:00:00-08:00","end":"2026-11-16T14:00:00-08:00","region":"us-west"}})
    .to_string()
}

/// Usage of December 1st (the test's clock is 2026-12-02): the open period's cost to date.
fn december() -> Vec<String> {
    vec![
        usage(
            "d-1",
            "acme",
            ["L-dec", "L-dec-0", "gpu.h100-80g", "1"],
            ["2026-12-01T09:00:00+08:00", "2026-12-01T13:00:00+08:00"],
        ),
        usage(
            "d-2",
            "acme",
            ["L-dec", "L-dec-1", "gpu.h100-80g", "1"],
            ["2026-12-01T09:00:00+08:00", "2026-12-01T12:00:00+08:00"],
        ),
        usage(
            "d-3",
            "beta",
            ["L-b", "vgpu0", "vgpu.t4-quarter", "0.5"],
            ["2026-12-01T10:00:00+08:00", "2026-12-01T12:00:00+08:00"],
        ),
    ]
}

/// What the usage chart for `[from, to)` must add up to: every bucket of the API's answer.
async fn usage_total(
    t: &TestApp,
    key: &str,
    from: &str,
    to: &str,
    granularity: &str,
    group_by: &str,
) -> Value {
    let (s, v) = t
        .get(
            &format!("/v1/usage?from={from}&to={to}&granularity={granularity}&group_by={group_by}&group_limit=1000"),
            key,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(
        v["next_from"].is_null() && v["next_group_after"].is_null(),
        "one page: {v}"
    );
    let groups = v["groups"].as_array().unwrap();
    let total: Decimal = groups
        .iter()
        .flat_map(|g| g["buckets"].as_array().unwrap())
        .map(|b| {
            b["unit_seconds"]
                .as_str()
                .unwrap()
                .parse::<Decimal>()
                .unwrap()
        })
        .sum();
    assert!(total > Decimal::ZERO, "usage to draw in {from}..{to}");
    // Per family (unit), as each chart draws it: the API's own answer with `family=`.
    let mut families = serde_json::Map::new();
    for family in ["gpu", "storage", "vgpu"] {
        let (s, f) = t
            .get(
                &format!("/v1/usage?from={from}&to={to}&granularity={granularity}&group_by={group_by}&group_limit=1000&family={family}"),
                key,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{f}");
        let sum: Decimal = f["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["buckets"].as_array().unwrap())
            .map(|b| {
                b["unit_seconds"]
                    .as_str()
                    .unwrap()
                    .parse::<Decimal>()
                    .unwrap()
            })
            .sum();
        assert!(sum > Decimal::ZERO, "{family} usage in {from}..{to}");
        families.insert(
            family.into(),
            json!({"total": sum.normalize().to_string(), "groups": f["groups"].as_array().unwrap().len()}),
        );
    }
    let parts: Decimal = families
        .values()
        .map(|f| f["total"].as_str().unwrap().parse::<Decimal>().unwrap())
        .sum();
    assert_eq!(parts, total, "the families partition the usage");
    json!({
        "families": families,
        "period": "2026-11",
        "granularity": granularity,
        "group_by": group_by,
        "from": v["from"],
        "to": v["to"],
        "groups": groups.len(),
        "total": total.normalize().to_string(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_in_headless_chromium_shows_what_the_api_answers() {
    let (node, dir, chromium) = (node(), browser_dir(), chromium());
    let t = TestApp::fresh(Db::Sqlite).await;
    let book = console_book();
    t.put_pricebook(&book).await;
    let acme = t.account("acme").await;
    let beta = t.account("beta").await;
    let gamma = t.account("gamma").await;
    // Quotas before the usage: the batches decide on them (the quota decisions page).
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            r#"{"spend_limit":"5000.00","prepaid_balance":"3000.00","gpu_hours":{"gpu.h100-80g":"1000"},"warn_at":"0.8"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let mut events: Vec<String> = fixture("worked-1/events.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    events.extend(fleet());
    events.push(regional());
    // November, then December, in two batches: a batch decides the quotas of the period of
    // its latest usage, so November's crossing the limits is recorded.
    for batch in [&events, &december()] {
        let answer = t.ingest(batch).await;
        assert_eq!(answer["rejected"], 0, "{answer}");
    }
    // A monthly plan from December 1st that renews, refunded pro rata when ended: on the
    // clock's 2026-12-02T00:00Z its first cycle (Nov 30 16:00Z to Dec 31 16:00Z, 744 h) has
    // 712 h left, so ending it now refunds round(300.00 x 712 / 744, 2) = 287.10.
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/terms/subscriptions/plan-m",
            r#"{"sku":"gpu.h100-80g","quantity":"1","cycle":"month","start":"2026-12-01T00:00:00+08:00","auto_renew":true,"refund":"prorata","price":"300.00"}"#,
        )
        .await;
    assert!(s.is_success(), "{v}");
    // One record the engine refuses, for the dead letters page.
    let bad = usage(
        "bad-1",
        "acme",
        ["L-x", "x0", "gpu.h100-80g", "-1"],
        ["2026-11-10T10:00:00+08:00", "2026-11-10T11:00:00+08:00"],
    );
    let answer = t.ingest(&[bad]).await;
    assert_eq!(answer["rejected"], 1, "{answer}");
    let reason = answer["results"][0]["reason"].as_str().unwrap().to_string();

    // What the pages must show, as the API answers it.
    let (s, cost) = t.get("/v1/cost/current", &acme).await;
    assert_eq!(s, StatusCode::OK, "{cost}");
    assert!(
        cost["invoice"]["total"]
            .as_str()
            .unwrap()
            .parse::<Decimal>()
            .unwrap()
            > Decimal::ZERO,
        "December has a cost to date: {cost}"
    );
    let (s, decisions) = t.get("/v1/quota/decisions?limit=1000", &acme).await;
    assert_eq!(s, StatusCode::OK, "{decisions}");
    let decisions = decisions["decisions"].as_array().unwrap().len();
    assert!(decisions > 0, "acme's November crossed its limits");
    let (s, balance) = t.get("/v1/balance", &acme).await;
    assert_eq!(s, StatusCode::OK, "{balance}");
    let plan = &balance["subscriptions"][0];
    assert_eq!(
        (
            &plan["id"],
            &plan["next_cycle_start"],
            &plan["refund_if_ended_now"]
        ),
        (
            &json!("plan-m"),
            &json!("2026-12-31T16:00:00Z"),
            &json!("287.10")
        ),
        "{balance}"
    );
    let (s, prices) = t.get("/v1/prices", &acme).await;
    assert_eq!(s, StatusCode::OK, "{prices}");
    // November in the price book's timezone (Asia/Shanghai), as the console finds it from the
    // open period's start; the API floors `from` to the granularity.
    let (from, to) = ("2026-10-31T16:00:00Z", "2026-11-30T16:00:00Z");
    let usage = vec![
        usage_total(&t, &acme, from, to, "hour", "sku").await,
        usage_total(&t, &acme, from, to, "day", "resource").await,
    ];
    // Home invoices (gamma's us-west one is checked as `regional`).
    let november: Value = offline_invoices(&book, &events, "2026-11")
        .into_iter()
        .filter(|i| i["region"].is_null())
        .map(|i| {
            (
                i["account"].as_str().unwrap().to_string(),
                i["total"].clone(),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    let expect = json!({
        "admin": ADMIN,
        "keys": { "acme": acme, "beta": beta, "gamma": gamma },
        "open_period": cost["period_label"],
        "usage": usage,
        "cost_to_date": cost["invoice"]["total"],
        "currency": cost["invoice"]["currency"],
        "spend_limit": balance["quotas"]["spend_limit"],
        "prepaid_balance": balance["prepaid_balance"],
        "wallet_balance": balance["wallet"]["balance"],
        "subscriptions": balance["subscriptions"],
        "dead_letter_reason": reason,
        "november": november,
        "accounts": ["acme", "beta", "gamma"],
        "decisions": decisions,
        "prices": prices,
        // gamma's 5 h in us-west at 3.20 USD (no tax there); its close also issues an empty
        // home invoice, so November's close issues 4 invoices.
        "regional": { "account": "gamma", "region": "us-west", "currency": "USD", "total": "16.00" },
        "closed": 4,
    });

    // The server, on a loopback port.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = billing_api::router(t.state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    // Issue 27's organization view, on a server of its own (its accounts stay out of the
    // figures above): corp pays for ml and web, projects by lease.tags, corp's spend limit.
    let (org_url, org_expect, org_server) = organization_server().await;
    let mut expect = expect;
    expect["organization"] = org_expect;
    expect["organization"]["url"] = json!(org_url);
    // Issue 28's notifications view, on a server of its own too.
    let (notify_url, notify_expect, notify_server, notify_app) = notifications_server().await;
    expect["notifications"] = notify_expect;
    expect["notifications"]["url"] = json!(notify_url);

    let docs_png = workspace().join("docs/console.png");
    let run = {
        let (url, expect) = (url.clone(), expect.to_string());
        let (artifacts, docs_png) = (artifacts(), docs_png.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(node)
                .arg("console.spec.mjs")
                .current_dir(dir)
                .env("GPUBILL_CONSOLE_URL", url)
                .env("GPUBILL_CONSOLE_EXPECT", expect)
                .env("GPUBILL_CHROMIUM", chromium)
                .env("GPUBILL_ARTIFACTS", artifacts)
                .env("GPUBILL_DOCS_SCREENSHOT", docs_png)
                .output()
                .expect("run node")
        })
        .await
        .unwrap()
    };
    server.abort();
    org_server.abort();
    notify_server.abort();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the browser test failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "the browser test ran no steps:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");

    // The close the admin made in the browser is the API's: acme's November invoice.
    let (s, list) = t.get("/v1/invoices", &acme).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let totals: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["total"])
        .collect();
    assert_eq!(totals, vec![&expect["november"]["acme"]], "{list}");
    // gamma's November is one invoice of us-west, in US dollars, as the browser showed it.
    let (s, list) = t.get("/v1/invoices", &gamma).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let regional: Vec<(&Value, &Value, &Value)> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["region"].is_null())
        .map(|i| (&i["region"], &i["currency"], &i["total"]))
        .collect();
    let r = &expect["regional"];
    assert_eq!(
        regional,
        vec![(&r["region"], &r["currency"], &r["total"])],
        "{list}"
    );
    assert!(
        docs_png.is_file(),
        "the README's screenshot {}",
        docs_png.display()
    );
    notifications_after_the_browser(&notify_app, &expect["notifications"]).await;
}

/// 36 CNY an hour in UTC: one unit for 100 s is exactly 1.00 (as in tests/notifications.rs).
const NOTIFY_BOOK: &str =
    "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n";

/// Issue 28's notifications view on a loopback port of its own: `nora` prepaid 5.00, the
/// arrears sequence on (1 h of grace, release 2 days after the stop), a budget `monthly` of
/// 10.00 at 50/80/100 % set with its own key, and a webhook endpoint (a receiver here that
/// answers 204) made over the API. Then 600 s of an H100 in December (6.00): the 50 % crossing
/// and the prepaid balance below zero (`arrears.started`, the stop due an hour later), both
/// delivered once by the `billing_webhooks` worker, so the delivery log has attempts. Answers
/// its URL, what the browser must show (the API's answers: the budget, the arrears state with
/// its next step, the notifications, the endpoint) and the server's task, with the app the
/// checks after the browser read.
async fn notifications_server() -> (
    String,
    Value,
    tokio::task::JoinHandle<std::io::Result<()>>,
    TestApp,
) {
    use billing_webhooks::clock::{SplitMix64, SystemClock};
    use billing_webhooks::deliver::Worker;
    use billing_webhooks::target::AddressPolicy;
    use std::sync::Arc;
    let loopback = || AddressPolicy::allowing(vec!["127.0.0.1/32".parse().unwrap()]);
    let mut t = TestApp::fresh(Db::Sqlite).await;
    t.state = t.state.clone().with_webhook_policy(loopback());
    t.app = billing_api::router(t.state.clone());
    t.put_pricebook(NOTIFY_BOOK).await;
    let key = t.account("nora").await;
    for (path, body) in [
        (
            "/v1/admin/accounts/nora/quotas",
            json!({"prepaid_balance": "5"}),
        ),
        (
            "/v1/admin/accounts/nora/arrears",
            json!({"grace_seconds": 3600, "release_after_seconds": 172_800}),
        ),
    ] {
        let (s, v) = t.admin("PUT", path, body.to_string()).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
    }
    let (s, v) = t
        .call(
            "PUT",
            "/v1/accounts/nora/budgets/monthly",
            Some(&key),
            "application/json",
            json!({"amount": "10", "thresholds": ["50", "80", "100"]}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    // The receiver: every delivery answered 204.
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", receiver.local_addr().unwrap());
    let receiver_app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { StatusCode::NO_CONTENT }),
    );
    tokio::spawn(async move { axum::serve(receiver, receiver_app).await });
    let (s, ep) = t
        .call(
            "POST",
            "/v1/accounts/nora/webhooks",
            Some(&key),
            "application/json",
            json!({"url": hook, "description": "ops"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{ep}");
    let endpoint = ep["id"].as_str().unwrap().to_string();
    let answer = t
        .ingest(&[usage(
            "n-1",
            "nora",
            ["L-n", "n0", "gpu.h100", "1"],
            ["2026-12-01T00:00:00Z", "2026-12-01T00:10:00Z"],
        )])
        .await;
    assert_eq!(answer["rejected"], 0, "{answer}");
    let (s, notes) = t.get("/v1/notifications", &key).await;
    assert_eq!(s, StatusCode::OK, "{notes}");
    let types: Vec<&str> = notes["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"budget.crossed") && types.contains(&"arrears.started"),
        "{notes}"
    );
    // Delivered once, each at its first attempt.
    let outbox = Arc::new(billing_store::SqlOutbox::new(t.state.store.clone()));
    let worker = Worker::new(
        outbox,
        Arc::new(SystemClock),
        Box::new(SplitMix64::new(7)),
        loopback(),
    )
    .unwrap();
    let mut attempted = 0;
    for _ in 0..50 {
        attempted += worker.tick().await.unwrap().attempted;
        if attempted >= types.len() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(attempted, types.len(), "one attempt per notification");
    let (s, log) = t
        .get(
            &format!("/v1/accounts/nora/webhooks/{endpoint}/deliveries"),
            &key,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{log}");
    let (s, view) = t.get("/v1/accounts/nora/notify", &key).await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(view["arrears"]["phase"], "started", "{view}");
    assert_eq!(view["arrears"]["next"][0], "stop", "{view}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = billing_api::router(t.state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let expect = json!({
        "key": key,
        "admin": ADMIN,
        "account": "nora",
        "view": view,
        "notifications": notes["notifications"],
        "endpoint": endpoint,
        "deliveries": log["deliveries"],
        // What the browser adds through the form.
        "new_budget": {"id": "gpu", "amount": "20", "thresholds": ["25", "75", "100"], "forecast": true, "action": "stop"},
    });
    (url, expect, server, t)
}

/// What the browser did on the notifications view is the API's: the budget it added, and the
/// test event it sent (a `test` notification after the usage's).
async fn notifications_after_the_browser(t: &TestApp, expect: &Value) {
    let key = expect["key"].as_str().unwrap();
    let (s, view) = t.get("/v1/accounts/nora/notify", key).await;
    assert_eq!(s, StatusCode::OK, "{view}");
    let want = &expect["new_budget"];
    let got = &view["settings"]["budgets"]["gpu"];
    for field in ["amount", "forecast", "action"] {
        let (a, b) = (&got[field], &want[field]);
        let same = match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) if field == "amount" => {
                x.parse::<Decimal>().unwrap() == y.parse::<Decimal>().unwrap()
            }
            _ => a == b,
        };
        assert!(
            same,
            "the budget the browser added: {field} {a} != {b}: {view}"
        );
    }
    let thresholds: Vec<Decimal> = got["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().parse().unwrap())
        .collect();
    let wanted: Vec<Decimal> = want["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(thresholds, wanted, "{view}");
    let (s, notes) = t.get("/v1/notifications", key).await;
    assert_eq!(s, StatusCode::OK, "{notes}");
    let before = expect["notifications"].as_array().unwrap().len();
    let after = notes["notifications"].as_array().unwrap();
    assert!(
        after[before..].iter().any(|n| n["type"] == "test"),
        "the test event the browser sent: {notes}"
    );
}

/// The organization of tests/org_fixture.rs served on a loopback port: its URL, what the
/// browser must show (`owner` and `member` keys of corp, `GET /v1/organization`'s answer for
/// November, and web's rows of `GET /v1/allocation`) and the server's task.
async fn organization_server() -> (String, Value, tokio::task::JoinHandle<std::io::Result<()>>) {
    let t = TestApp::fresh(Db::Sqlite).await;
    let (owner, _) = org_fixture::small_tree(&t).await;
    let (s, k) = t
        .admin(
            "POST",
            "/v1/admin/accounts/corp/keys",
            r#"{"role":"member"}"#.to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{k}");
    let (s, answer) = t.get("/v1/organization?period=2026-11", &owner).await;
    assert_eq!(s, StatusCode::OK, "{answer}");
    assert_eq!(answer["total"], "240.00", "{answer}");
    let (s, a) = t
        .get("/v1/allocation?period=2026-11&account=web", &owner)
        .await;
    assert_eq!(s, StatusCode::OK, "{a}");
    let web: Vec<&Value> = a["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["account"] == "web")
        .collect();
    assert_eq!(web.len(), 2, "web's two projects: {a}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = billing_api::router(t.state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let expect = json!({
        "owner": owner,
        "member": k["api_key"],
        "period": "2026-11",
        "answer": answer,
        "web_rows": web,
    });
    (url, expect, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_files_are_served_with_their_types_and_a_strict_policy() {
    let t = TestApp::fresh(Db::Sqlite).await;
    for (path, ctype) in [
        ("/", "text/html; charset=utf-8"),
        ("/console/app.js", "text/javascript; charset=utf-8"),
        ("/console/app.css", "text/css; charset=utf-8"),
        (
            "/console/vendor/echarts.min.js",
            "text/javascript; charset=utf-8",
        ),
        ("/console/vendor/LICENSE", "text/plain; charset=utf-8"),
    ] {
        let resp = raw_response(&t, path, None).await;
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        let h = resp.headers();
        assert_eq!(h["content-type"], ctype, "{path}");
        assert_eq!(h["cache-control"], "no-cache", "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(h["x-content-type-options"], "nosniff");
        // The same file again with its ETag: 304, no body.
        let etag = h["etag"].to_str().unwrap().to_string();
        let again = raw_response(&t, path, Some(&etag)).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{path}");
    }
    // No token needed for the page; the API still wants one.
    let (s, _) = t.call("GET", "/console/nope.js", None, "", "").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = t.call("GET", "/v1/admin/accounts", None, "", "").await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

async fn raw_response(
    t: &TestApp,
    path: &str,
    if_none_match: Option<&str>,
) -> axum::response::Response {
    use tower::ServiceExt;
    let mut req = axum::http::Request::builder().uri(path);
    if let Some(tag) = if_none_match {
        req = req.header("if-none-match", tag);
    }
    t.app
        .clone()
        .oneshot(req.body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_lists_accounts_with_quotas_page_by_page() {
    for db in BOTH {
        let t = TestApp::fresh(db).await;
        let key = t.account("b-acct").await;
        t.account("a-acct").await;
        t.account("c-acct").await;
        let (s, v) = t
            .admin(
                "PUT",
                "/v1/admin/accounts/b-acct/quotas",
                r#"{"spend_limit":"100.00"}"#,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let (s, page) = t.admin("GET", "/v1/admin/accounts?limit=2", "").await;
        assert_eq!(s, StatusCode::OK, "{page}");
        let ids: Vec<&str> = page["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a-acct", "b-acct"], "{db:?}");
        assert_eq!(page["next_after"], "b-acct");
        assert!(page["accounts"][0]["quotas"].is_null());
        assert_eq!(page["accounts"][1]["quotas"]["spend_limit"], "100.00");
        assert_eq!(page["accounts"][0]["created_at"], "2026-12-02T00:00:00Z");
        let (_, rest) = t
            .admin("GET", "/v1/admin/accounts?limit=2&after=b-acct", "")
            .await;
        assert_eq!(rest["accounts"][0]["id"], "c-acct");
        assert!(rest["next_after"].is_null(), "{rest}");
        for bad in ["0", "1001"] {
            let (s, v) = t
                .admin("GET", &format!("/v1/admin/accounts?limit={bad}"), "")
                .await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        }
        let (s, _) = t.get("/v1/admin/accounts", &key).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "a customer key");
    }
}
