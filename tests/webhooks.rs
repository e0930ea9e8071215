//! Issue 28, webhooks end to end on SQLite and PostgreSQL: endpoints made over the API, the
//! notifications of the store (a test event, a budget crossing) delivered by the
//! `billing_webhooks` worker over the store's `SqlOutbox`, and verified by a verifier nobody
//! here wrote (the `standardwebhooks` package of PyPI, in
//! services/billing-webhooks/tests/receiver.py): in seq order, and across a secret rotation
//! with both secrets. Then retries at the schedule against a receiver that fails (a test
//! clock), the endpoint disabled after 5 days and re-enabled, resend, and bad input.
//!
//! Needs `./scripts/services.sh postgres python-tools` (the venv
//! `~/.cache/gpubill/venv-webhooks`): missing, the test fails saying so; nothing is skipped.

use axum::http::StatusCode;
use billing_store::SqlOutbox;
use billing_webhooks::clock::{Clock, SplitMix64, SystemClock, TestClock};
use billing_webhooks::deliver::Worker;
use billing_webhooks::target::AddressPolicy;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// 36 CNY an hour: one unit for 100 s is exactly 1.00.
const BOOK: &str =
    "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36\"\n";

/// 2026-12-01T00:00:00Z.
const DEC_1: i64 = 1_796_083_200;

fn loopback() -> AddressPolicy {
    AddressPolicy::allowing(vec!["127.0.0.1/32".parse().unwrap()])
}

fn wall_ms() -> i64 {
    SystemClock.now_ms()
}

/// The app on `db` whose endpoints may be on 127.0.0.1, its clock at `now_ms`.
async fn app(db: Db, now_ms: i64) -> TestApp {
    let mut t = TestApp::fresh(db).await.at(now_ms);
    t.state = t.state.clone().with_webhook_policy(loopback());
    t.app = billing_api::router(t.state.clone());
    t.put_pricebook(BOOK).await;
    t
}

fn worker(t: &TestApp, clock: Arc<dyn Clock>) -> Worker<SqlOutbox> {
    let outbox = Arc::new(SqlOutbox::new(t.state.store.clone()));
    Worker::new(outbox, clock, Box::new(SplitMix64::new(7)), loopback()).unwrap()
}

fn usage(id: &str, account: &str, start: i64, seconds: i64) -> String {
    json!({"specversion": "1.0", "id": id, "source": "node/1", "type": "gpu.usage", "subject": account,
        "data": {"lease": format!("L-{id}"), "resource": "gpu0", "sku": "gpu.h100",
            "start": rfc(start), "end": rfc(start + seconds)}})
    .to_string()
}

async fn create(t: &TestApp, account: &str, body: Value) -> Value {
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/{account}/webhooks"),
            body.to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert!(v["secret"].as_str().unwrap().starts_with("whsec_"), "{v}");
    v
}

async fn send_test(t: &TestApp, account: &str, endpoint: &str) -> Value {
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/{account}/webhooks/{endpoint}/test"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

async fn patch_url(t: &TestApp, account: &str, endpoint: &str, url: &str) {
    let (s, v) = t
        .admin(
            "PATCH",
            &format!("/v1/accounts/{account}/webhooks/{endpoint}"),
            json!({ "url": url }).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["url"], url, "{v}");
}

/// The venv `scripts/services.sh python-tools` makes, with the pinned `standardwebhooks`.
fn venv_python() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    let python = cache.join("gpubill/venv-webhooks/bin/python");
    assert!(
        python.exists(),
        "{} is missing: the webhooks test verifies deliveries with the standardwebhooks package; \
         make the venv with ./scripts/services.sh python-tools",
        python.display()
    );
    python
}

/// receiver.py with labelled secrets, killed when dropped.
struct PyReceiver {
    child: Child,
    lines: Receiver<String>,
    url: String,
}

impl Drop for PyReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PyReceiver {
    fn start(secrets: &[(&str, &str)]) -> PyReceiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../services/billing-webhooks/tests/receiver.py");
        let mut command = Command::new(venv_python());
        command.arg(script);
        for (label, secret) in secrets {
            command.arg("--secret").arg(format!("{label}={secret}"));
        }
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut r = PyReceiver {
            child,
            lines,
            url: String::new(),
        };
        let first = r.next_line();
        let port = first
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("receiver.py said {first:?}"));
        r.url = format!("http://127.0.0.1:{port}/hook");
        r
    }

    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("receiver.py printed nothing for 20 s")
    }

    fn next_delivery(&self) -> Value {
        let line = self.next_line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }
}

/// Ticks until `n` deliveries were attempted in all (at most 50 ticks).
async fn tick_until(w: &Worker<SqlOutbox>, n: usize) {
    let mut attempted = 0;
    for _ in 0..50 {
        attempted += w.tick().await.unwrap().attempted;
        if attempted >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{attempted} attempts, {n} expected");
}

/// Every delivery verified by the standardwebhooks package with the endpoint's secret, in the
/// account's seq order (a test event, then the budget's crossings); after a rotation, the next
/// delivery verifies with the old and with the new secret alone.
async fn deliveries_verify_with_standardwebhooks_in_seq_order(db: Db) {
    let now = wall_ms();
    let t = app(db, now).await;
    let key = t.account("acme").await;
    // The secret comes back once: the receiver is started with it, then the URL set to it.
    let ep = create(
        &t,
        "acme",
        json!({"url": "http://127.0.0.1:9/placeholder", "description": "ops"}),
    )
    .await;
    let id = ep["id"].as_str().unwrap().to_string();
    let secret = ep["secret"].as_str().unwrap().to_string();
    assert_eq!(ep["event_types"], json!([]), "{ep}");
    assert_eq!(ep["enabled"], true, "{ep}");
    let receiver = PyReceiver::start(&[("current", &secret)]);
    patch_url(&t, "acme", &id, &receiver.url).await;
    // The customer's own key reads it, never the secret.
    let (s, listed) = t.get("/v1/accounts/acme/webhooks", &key).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    assert_eq!(listed["endpoints"][0]["id"], id.as_str(), "{listed}");
    assert!(listed["endpoints"][0].get("secret").is_none(), "{listed}");

    send_test(&t, "acme", &id).await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/accounts/acme/budgets/b1",
            json!({"amount": "10", "thresholds": ["50", "100"]}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    // December's usage, before the clock: 6.00, then 5.00 more (11.00 of 10.00).
    let start = DEC_1 + 3600;
    t.ingest(&[usage("u1", "acme", start, 600)]).await;
    t.ingest(&[usage("u2", "acme", start + 1000, 500)]).await;
    let (s, listed) = t.get("/v1/notifications?account=acme", &key).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    let notes = listed["notifications"].as_array().unwrap().clone();
    let types: Vec<&str> = notes.iter().map(|n| n["type"].as_str().unwrap()).collect();
    assert_eq!(types[0], "test", "{listed}");
    assert!(
        types[1..]
            .iter()
            .filter(|t| **t == "budget.crossed")
            .count()
            >= 2,
        "the 50% and 100% crossings: {listed}"
    );

    let w = worker(&t, Arc::new(SystemClock));
    tick_until(&w, notes.len()).await;
    let mut seqs = Vec::new();
    for n in &notes {
        let d = receiver.next_delivery();
        assert_eq!(d["verified_by"], json!(["current"]), "{d}");
        assert_eq!(d["signatures"], 1, "{d}");
        assert_eq!(d["content_type"], "application/json", "{d}");
        assert_eq!(d["id"], format!("msg_{}", n["id"]), "{d}");
        assert_eq!(d["body"], n["body"], "the body as stored, exactly");
        seqs.push(d["body"]["seq"].as_i64().unwrap());
    }
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted, "delivered in seq order");
    assert_eq!(seqs.len(), notes.len());

    // The delivery log: every one delivered at its first attempt, with a 204.
    let (s, log) = t
        .get(&format!("/v1/accounts/acme/webhooks/{id}/deliveries"), &key)
        .await;
    assert_eq!(s, StatusCode::OK, "{log}");
    let log = log["deliveries"].as_array().unwrap();
    assert_eq!(log.len(), notes.len());
    for d in log {
        assert_eq!(d["status"], "delivered", "{d}");
        assert_eq!(d["attempts"][0]["status_code"], 204, "{d}");
        assert_eq!(d["attempts"][0]["error"], Value::Null, "{d}");
    }

    // Rotation: the next delivery carries both signatures, each verifying alone.
    let (s, rotated) = t
        .admin(
            "POST",
            &format!("/v1/accounts/acme/webhooks/{id}/rotate"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    let new = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(new, secret);
    let expires = rotated["previous_secret_expires_at_ms"].as_i64().unwrap();
    assert_eq!(expires, now + 24 * 3_600_000, "{rotated}");
    let both = PyReceiver::start(&[("old", &secret), ("new", &new)]);
    patch_url(&t, "acme", &id, &both.url).await;
    send_test(&t, "acme", &id).await;
    tick_until(&w, 1).await;
    let d = both.next_delivery();
    assert_eq!(d["signatures"], 2, "{d}");
    assert_eq!(d["verified_by"], json!(["old", "new"]), "{d}");
    assert_eq!(d["body"]["type"], "test", "{d}");
    assert_eq!(
        d["body"]["seq"].as_i64().unwrap(),
        seqs.last().unwrap() + 1,
        "{d}"
    );
}
on_both!(deliveries_verify_with_standardwebhooks_in_seq_order);

/// An in-process receiver: fails (500) while `failing` is above 0 (decremented per request),
/// and notes the `webhook-id` of every request.
#[derive(Clone, Default)]
struct Flaky {
    failing: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Flaky {
    async fn serve(&self) -> String {
        let me = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let me = me.clone();
                async move {
                    let id = headers["webhook-id"].to_str().unwrap().to_string();
                    me.seen.lock().unwrap().push(id);
                    let failing = me.failing.load(Ordering::SeqCst);
                    if failing > 0 {
                        if failing != usize::MAX {
                            me.failing.store(failing - 1, Ordering::SeqCst);
                        }
                        StatusCode::INTERNAL_SERVER_ERROR
                    } else {
                        StatusCode::NO_CONTENT
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://127.0.0.1:{port}/hook")
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

async fn log_of(t: &TestApp, id: &str) -> Vec<Value> {
    let (s, log) = t
        .admin(
            "GET",
            &format!("/v1/accounts/acme/webhooks/{id}/deliveries?limit=1000"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{log}");
    log["deliveries"].as_array().unwrap().clone()
}

/// A receiver failing its first 3 attempts: retried at 5 s and 5 min (± 10 %), then
/// delivered, the second message only after the first. Failing for good: the endpoint is
/// disabled at the first failed attempt 5 days after its first failure; `POST .../enable`
/// brings it back and its pending messages go out in order; a failed one goes out by resend.
async fn retries_disable_and_reenable_in_order(db: Db) {
    let t = app(db, DEC_2_2026_MS).await;
    t.account("acme").await;
    let flaky = Flaky::default();
    flaky.failing.store(3, Ordering::SeqCst);
    let url = flaky.serve().await;
    let ep = create(&t, "acme", json!({"url": url, "event_types": ["test"]})).await;
    let id = ep["id"].as_str().unwrap().to_string();
    let n1 = send_test(&t, "acme", &id).await["notification"]
        .as_i64()
        .unwrap();
    let n2 = send_test(&t, "acme", &id).await["notification"]
        .as_i64()
        .unwrap();
    let clock = Arc::new(TestClock::new(DEC_2_2026_MS));
    let w = worker(&t, clock.clone());

    // Attempt 1 at once, fails; the retry after 5 s ± 10 %.
    assert_eq!(w.tick().await.unwrap().attempted, 1);
    let delays = [5_000i64, 300_000, 1_800_000];
    for (i, base) in delays.iter().enumerate() {
        let log = log_of(&t, &id).await;
        let head = log.iter().find(|d| d["notification"] == n1).unwrap();
        assert_eq!(head["status"], "pending", "{head}");
        assert_eq!(head["attempts"].as_array().unwrap().len(), i + 1, "{head}");
        assert_eq!(head["attempts"][i]["status_code"], 500, "{head}");
        let last_at = head["attempts"][i]["at_ms"].as_i64().unwrap();
        let next = head["next_attempt_at_ms"].as_i64().unwrap();
        assert!(
            (base * 9 / 10..=base * 11 / 10).contains(&(next - last_at)),
            "retry {} after {} ms: {head}",
            i + 1,
            next - last_at
        );
        // n2 waits behind n1, even when due.
        let behind = log.iter().find(|d| d["notification"] == n2).unwrap();
        assert_eq!(behind["attempts_total"], 0, "{behind}");
        // Not before its time.
        clock.set(next - 1);
        assert_eq!(w.tick().await.unwrap().attempted, 0);
        clock.set(next);
        assert_eq!(w.tick().await.unwrap().attempted, 1);
    }
    // The 4th attempt delivered n1; n2 follows.
    assert_eq!(w.tick().await.unwrap().delivered, 1);
    let (m1, m2) = (format!("msg_{n1}"), format!("msg_{n2}"));
    assert_eq!(
        flaky.seen(),
        vec![m1.clone(), m1.clone(), m1.clone(), m1, m2]
    );
    for d in log_of(&t, &id).await {
        assert_eq!(d["status"], "delivered", "{d}");
    }

    // Failing for good: an event a day; the endpoint is disabled 5 days after its first
    // failure, its messages kept.
    flaky.failing.store(usize::MAX, Ordering::SeqCst);
    let failing_from = clock.now_ms();
    let mut sent = Vec::new();
    let mut disabled = false;
    'days: for _day in 0..7 {
        sent.push(
            send_test(&t, "acme", &id).await["notification"]
                .as_i64()
                .unwrap(),
        );
        for _hour in 0..24 {
            let report = w.tick().await.unwrap();
            if !report.disabled.is_empty() {
                disabled = true;
                break 'days;
            }
            clock.advance(3_600_000);
        }
    }
    assert!(disabled, "not disabled after 7 days of failures");
    let (_, ep) = t
        .admin("GET", &format!("/v1/accounts/acme/webhooks/{id}"), "")
        .await;
    assert_eq!(ep["enabled"], false, "{ep}");
    let disabled_at = ep["disabled_at_ms"].as_i64().unwrap();
    let since = ep["failing_since_ms"].as_i64().unwrap();
    assert!(since >= failing_from, "{ep}");
    assert!(disabled_at - since >= 5 * 86_400_000, "{ep}");
    assert!(
        disabled_at - since < 5 * 86_400_000 + 12 * 3_600_000,
        "{ep}"
    );
    // Disabled: nothing is attempted, a new event waits.
    sent.push(
        send_test(&t, "acme", &id).await["notification"]
            .as_i64()
            .unwrap(),
    );
    clock.advance(86_400_000);
    assert_eq!(w.tick().await.unwrap().attempted, 0);

    // Re-enabled: the pending messages go out at once, oldest first; failed ones stay failed.
    flaky.failing.store(0, Ordering::SeqCst);
    flaky.seen.lock().unwrap().clear();
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/acme/webhooks/{id}/enable"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (&v["enabled"], &v["reenabled"]),
        (&json!(true), &json!(true)),
        "{v}"
    );
    let log = log_of(&t, &id).await;
    let status = |n: i64| {
        log.iter()
            .find(|d| d["notification"] == n)
            .map(|d| d["status"].as_str().unwrap().to_string())
            .unwrap()
    };
    let pending: Vec<i64> = sent
        .iter()
        .copied()
        .filter(|n| status(*n) == "pending")
        .collect();
    let failed: Vec<i64> = sent
        .iter()
        .copied()
        .filter(|n| status(*n) == "failed")
        .collect();
    assert!(!pending.is_empty() && !failed.is_empty(), "{log:?}");
    tick_until(&w, pending.len()).await;
    let expected: Vec<String> = pending.iter().map(|n| format!("msg_{n}")).collect();
    assert_eq!(flaky.seen(), expected, "in order, once each");

    // A failed message goes out again by resend, keeping its number.
    let again = failed[0];
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/acme/webhooks/{id}/deliveries/{again}/resend"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["requeued"], true, "{v}");
    tick_until(&w, 1).await;
    assert_eq!(flaky.seen().last().unwrap(), &format!("msg_{again}"));
    let log = log_of(&t, &id).await;
    let d = log.iter().find(|d| d["notification"] == again).unwrap();
    assert_eq!(d["status"], "delivered", "{d}");
    assert_eq!(
        d["attempts"].as_array().unwrap().len(),
        9,
        "8 failed, then the resend: {d}"
    );
    // Resending a delivered one again is fine; an unknown one is a 404.
    let (s, v) = t
        .admin(
            "POST",
            &format!("/v1/accounts/acme/webhooks/{id}/deliveries/999999/resend"),
            "",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");

    // Deleted: its pending deliveries are not attempted any more.
    flaky.seen.lock().unwrap().clear();
    send_test(&t, "acme", &id).await;
    let (s, _) = t
        .admin("DELETE", &format!("/v1/accounts/acme/webhooks/{id}"), "")
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_eq!(w.tick().await.unwrap().attempted, 0);
    assert!(flaky.seen().is_empty());
    let (s, _) = t
        .admin("GET", &format!("/v1/accounts/acme/webhooks/{id}"), "")
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}
on_both!(retries_disable_and_reenable_in_order);

/// Bad input names the field; another tenant's key finds nothing; a platform endpoint is the
/// admin's.
async fn bad_input_and_other_tenants(db: Db) {
    let t = app(db, DEC_2_2026_MS).await;
    let acme = t.account("acme").await;
    let other = t.account("other").await;
    let strict = t
        .state
        .clone()
        .with_webhook_policy(AddressPolicy::public_only());
    for (body, words) in [
        (
            json!({"url": "ftp://example.com/hook"}),
            vec!["url", "http or https", "ftp"],
        ),
        (
            json!({"url": "http://10.0.0.1/hook"}),
            vec!["url", "10.0.0.1", "private"],
        ),
        (
            json!({"url": "http://127.0.0.1:9/hook", "event_types": ["budget.crossed", "nope"]}),
            vec!["event_types", "nope", "budget.crossed"],
        ),
        (json!({"url": "not a url"}), vec!["url"]),
    ] {
        let (s, v) = t
            .call(
                "POST",
                "/v1/accounts/acme/webhooks",
                Some(&acme),
                "application/json",
                body.to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {v}");
        let message = v["message"].as_str().unwrap();
        for w in words {
            assert!(message.contains(w), "{body}: {message:?} lacks {w:?}");
        }
    }
    // Loopback is refused unless the operator allowed it.
    let strict_app = billing_api::router(strict);
    let resp = tower::ServiceExt::oneshot(
        strict_app,
        axum::http::Request::builder()
            .method("POST")
            .uri("/v1/accounts/acme/webhooks")
            .header("authorization", format!("Bearer {acme}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(
                json!({"url": "http://127.0.0.1:9/hook"}).to_string(),
            ))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let ep = create(&t, "acme", json!({"url": "http://127.0.0.1:9/hook"})).await;
    let id = ep["id"].as_str().unwrap();
    // Another tenant: its key reaches neither the account nor the endpoint.
    for (method, path) in [
        ("GET", "/v1/accounts/acme/webhooks".to_string()),
        ("GET", format!("/v1/accounts/acme/webhooks/{id}")),
        ("POST", format!("/v1/accounts/acme/webhooks/{id}/rotate")),
        ("DELETE", format!("/v1/accounts/acme/webhooks/{id}")),
    ] {
        let (s, v) = t
            .call(method, &path, Some(&other), "application/json", "")
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{method} {path}: {v}");
    }
    // Its own account's path with acme's endpoint: no such endpoint there.
    let (s, v) = t
        .get(&format!("/v1/accounts/other/webhooks/{id}"), &other)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v["message"].as_str().unwrap().contains(id), "{v}");
    let (s, v) = t
        .call(
            "PATCH",
            &format!("/v1/accounts/acme/webhooks/{id}"),
            Some(&acme),
            "application/json",
            json!({"event_types": ["budget.crossd"]}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("event_types"),
        "{v}"
    );
    let (s, v) = t.get("/v1/accounts/acme/webhooks/ep_nope", &acme).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");

    // Platform endpoints: the admin's alone; they receive every account's notifications.
    let (s, v) = t
        .call(
            "POST",
            "/v1/admin/webhooks",
            Some(&acme),
            "application/json",
            json!({"url": "http://127.0.0.1:9/hook"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    let (s, platform) = t
        .admin(
            "POST",
            "/v1/admin/webhooks",
            json!({"url": "http://127.0.0.1:9/p", "event_types": ["test"]}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{platform}");
    assert_eq!(platform["account"], Value::Null);
    let (_, listed) = t.admin("GET", "/v1/admin/webhooks", "").await;
    assert_eq!(listed["endpoints"].as_array().unwrap().len(), 1, "{listed}");
    let (_, listed) = t.admin("GET", "/v1/accounts/acme/webhooks", "").await;
    assert_eq!(listed["endpoints"].as_array().unwrap().len(), 1, "{listed}");
    let pid = platform["id"].as_str().unwrap();
    let (s, _) = t
        .admin("DELETE", &format!("/v1/accounts/acme/webhooks/{pid}"), "")
        .await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "a platform endpoint is not an account's"
    );
    let (s, v) = t
        .admin("POST", &format!("/v1/admin/webhooks/{pid}/enable"), "")
        .await;
    assert_eq!((s, &v["reenabled"]), (StatusCode::OK, &json!(false)), "{v}");
    let (s, _) = t
        .admin("DELETE", &format!("/v1/admin/webhooks/{pid}"), "")
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
}
on_both!(bad_input_and_other_tenants);
