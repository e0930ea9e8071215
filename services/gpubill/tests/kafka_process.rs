//! `gpubill serve --kafka-brokers` as real processes against real tansu and PostgreSQL:
//! SIGKILLed at random moments mid-stream, two engines sharing the partitions, and
//! `gpubill replay` into an empty database. Started by ./scripts/test (tansu, PostgreSQL).

use gpubill_tests::{brokers, create_topic, fresh_db, produce_keyed, section6};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BOOK: &str = "currency = \"CNY\"\ntimezone = \"Asia/Shanghai\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"24\"\nspot_rate_per_hour = \"9.6\"\nminimum_seconds = 60\ntiers = [ { up_to_hours = 5000, rate_per_hour = \"24\" }, { rate_per_hour = \"20\" } ]\n[skus.\"vgpu.h100-quarter\"]\nrate_per_hour = \"7\"\nspot_rate_per_hour = \"3\"\n[[offpeak]]\nfrom = \"22:00\"\nto = \"06:00\"\nmultiplier = \"0.7\"\n[egress.internet]\ntiers = [ { up_to_gb = 100, rate_per_gb = \"0\" }, { rate_per_gb = \"0.8\" } ]\n[egress.cross_region]\nrate_per_gb = \"0.1\"\n";
const ADMIN: &str = "process-test-admin-0123456789abcdef";

fn gpubill() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpubill"))
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpubill-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fleet's events (JSONL) from `gpubill simulate`: heartbeats with overlaps, 10%
/// redeliveries, spot, vGPU shares, lease churn, egress.
fn simulate(dir: &Path, gpus: u32, seconds: u32) -> (PathBuf, Vec<String>) {
    let path = dir.join("events.jsonl");
    let out = gpubill()
        .args([
            "simulate",
            "--gpus",
            &gpus.to_string(),
            "--seconds",
            &seconds.to_string(),
        ])
        .args(["--churn-seconds", "7200", "--egress-every", "600", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (path, events)
}

/// `gpubill rate` on the same events: the invoices the engine must issue.
fn offline(dir: &Path, events: &Path) -> Vec<Value> {
    let book = dir.join("book.toml");
    std::fs::write(&book, BOOK).unwrap();
    let out = gpubill()
        .args(["rate", "--period", "2026-11", "--prices"])
        .arg(&book)
        .arg("--events")
        .arg(events)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// Topics of one test: usage (4 partitions), commands, invoices, dead letters.
struct Topics {
    usage: String,
    commands: String,
    invoices: String,
    dlq: String,
}

async fn topics(name: &str) -> Topics {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let usage = format!("gpu.usage.{name}-{}-{nanos}", std::process::id());
    let t = Topics {
        commands: format!("{usage}.commands"),
        invoices: format!("{usage}.invoices"),
        dlq: format!("{usage}.dlq"),
        usage,
    };
    create_topic(&t.usage, 4).await;
    for x in [&t.commands, &t.invoices, &t.dlq] {
        create_topic(x, 1).await;
    }
    t
}

/// Produces the events keyed by account, as node agents do.
async fn produce_events(topic: &str, events: &[String]) {
    let records: Vec<(String, Vec<u8>)> = events
        .iter()
        .map(|e| {
            let v: Value = serde_json::from_str(e).unwrap();
            (
                v["subject"].as_str().unwrap().to_string(),
                e.as_bytes().to_vec(),
            )
        })
        .collect();
    produce_keyed(topic, &records).await;
}

/// Where an engine on `port` with data directory `data` writes its log (warnings and errors).
fn engine_log(data: &Path, port: u16) -> std::fs::File {
    let path = data.with_extension(format!("engine-{port}.log"));
    std::fs::File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One `gpubill serve --kafka-brokers` process; SIGKILLed when dropped.
struct Engine {
    child: Child,
    port: u16,
}

impl Engine {
    fn start(db: &str, t: &Topics, data: &Path, book: &Path) -> Engine {
        Engine::start_with(db, t, data, book, &[])
    }

    /// [`Engine::start`] with more `serve` arguments.
    fn start_with(db: &str, t: &Topics, data: &Path, book: &Path, more: &[&str]) -> Engine {
        let port = free_port();
        let child = gpubill()
            .args(["serve", "--database", db, "--kafka-brokers", brokers()])
            .args(more)
            // The simulated fleet is dated November 2026: keep it inside the dedupe horizon.
            .args(["--dedupe-horizon-days", "36500"])
            .args(["--usage-topic", &t.usage, "--commands-topic", &t.commands])
            // A group of the test's own: engines SIGKILLed here stay members of their group
            // until the broker expires them, which must not hold up other tests' groups.
            .args(["--kafka-group", &format!("{}-engines", t.usage)])
            .args([
                "--invoices-topic",
                &t.invoices,
                "--dead-letter-topic",
                &t.dlq,
            ])
            .args([
                "--kafka-batch-max",
                "250",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .arg("--data-dir")
            .arg(data)
            .arg("--prices")
            .arg(book)
            .env("GPUBILL_ADMIN_TOKEN", ADMIN)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            // Kept for a failure's post-mortem: `<data>.engine-<port>.log`.
            .stderr(engine_log(data, port))
            .spawn()
            .unwrap();
        Engine { child, port }
    }

    /// Waits (up to 60 s) until the engine answers `/healthz`.
    async fn wait_serving(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = format!("http://127.0.0.1:{}/healthz", self.port);
        while !reqwest::get(&url)
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            assert!(
                Instant::now() < deadline,
                "engine on port {} does not serve after 60 s (see its .engine-{}.log)",
                self.port,
                self.port
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL: no shutdown, no flush, whatever it was doing.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Records folded so far: the stored positions of the usage topic's partitions.
async fn folded(store: &billing_store::Store, topic: &str) -> i64 {
    gpubill_tests::stored_positions(store, topic).await
}

async fn wait_folded(store: &billing_store::Store, topic: &str, total: i64, within: Duration) {
    let deadline = Instant::now() + within;
    while folded(store, topic).await < total {
        assert!(
            Instant::now() < deadline,
            "folded {} of {total} records in {within:?}",
            folded(store, topic).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Closes November through the engine's HTTP API.
async fn close(port: u16) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{port}/v1/admin/invoices/close?period=2026-11"
            ))
            .bearer_auth(ADMIN)
            .send()
            .await;
        match r {
            Ok(r) => {
                assert!(r.status().is_success(), "{}", r.text().await.unwrap());
                return r.json().await.unwrap();
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "engine not answering: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// What the engine's database says and what the offline rating says must agree: invoices to
/// the cent, one event row per distinct (source, id), nothing dead-lettered, and the ledger
/// rows equal to the embedded engine's on the same events.
async fn assert_exact(
    store: &billing_store::Store,
    issued: &[Value],
    offline: &[Value],
    events: &[String],
) {
    let issued: Vec<Value> = issued.iter().map(section6).collect();
    assert_eq!(issued.len(), offline.len());
    assert!(issued == offline, "invoices differ from gpubill rate");
    let distinct: std::collections::BTreeSet<(String, String)> = events
        .iter()
        .map(|e| {
            let v: Value = serde_json::from_str(e).unwrap();
            (
                v["source"].as_str().unwrap().into(),
                v["id"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        store.log().event_count().await.unwrap(),
        distinct.len() as i64,
        "an event counted twice or lost"
    );
    assert!(store.log().dead_letters(0, 1).await.unwrap().is_empty());
    // The embedded engine on the same events: the same ledger rows, run for run.
    let embedded = billing_store::Store::open(&fresh_db(gpubill_tests::Db::Postgres).await)
        .await
        .unwrap()
        .with_dedupe_horizon(gpubill_tests::CENTURY_S);
    for chunk in events.chunks(10_000) {
        embedded
            .log()
            .ingest(
                chunk.iter().map(|e| e.as_bytes().to_vec()).collect(),
                billing_api::system_clock()(),
            )
            .await
            .unwrap();
    }
    let rows = async |s: &billing_store::Store| -> Vec<(String, String)> {
        billing_store::db::query("select key_id, runs from ledger_keys order by key_id")
            .fetch_all(s.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    };
    let (got, want) = (rows(store).await, rows(&embedded).await);
    assert_eq!(got.len(), want.len());
    assert!(got == want, "ledger rows differ from the embedded engine's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_ten_times_during_a_200k_event_replay_bills_exactly() {
    let dir = dir("crash");
    // 64 GPUs for a day: ~203,000 records with the redeliveries and egress.
    let (events_path, events) = simulate(&dir, 64, 86_400);
    assert!(events.len() >= 200_000, "{}", events.len());
    let offline = offline(&dir, &events_path);
    let t = topics("crash").await;
    produce_events(&t.usage, &events).await;
    // Every record produced is acknowledged; the total is what the partitions must reach
    // (tansu's high watermarks undercount multi-record batches, so they are not used).
    let total = events.len() as i64;

    let db = fresh_db(gpubill_tests::Db::Postgres).await;
    // The test's own commands (accounts, budgets) go to the engines' commands topic.
    let store = billing_store::Store::open(&db)
        .await
        .unwrap()
        .with_topics(billing_store::Topics {
            commands: t.commands.clone(),
            invoices: t.invoices.clone(),
            ..Default::default()
        });
    let book = dir.join("book.toml");
    let mut seed = 0x5eed_u64;
    let mut random = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    // Issue 28: every account gets a budget of its whole invoice's total with thresholds
    // 50/80/100 %: each crossing must be notified exactly once, in order, across the kills.
    let budgets = budget_every_account(&store, &offline).await;
    let mut mid_stream = 0;
    for kill in 0..10 {
        let engine = Engine::start(&db, &t, &dir.join("data"), &book);
        // Wait until this incarnation folds something, then kill it at a random moment.
        let before = folded(&store, &t.usage).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while folded(&store, &t.usage).await == before && before < total {
            assert!(
                Instant::now() < deadline,
                "restart {kill}: nothing folded in 60 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(random(400))).await;
        let at = folded(&store, &t.usage).await;
        engine.kill();
        if at < total {
            mid_stream += 1;
        }
        eprintln!("kill {kill}: {at} of {total} records folded");
    }
    assert!(mid_stream >= 5, "only {mid_stream} kills landed mid-stream");
    let engine = Engine::start(&db, &t, &dir.join("data"), &book);
    wait_folded(&store, &t.usage, total, Duration::from_secs(120)).await;
    let issued = close(engine.port).await;
    assert_exact(&store, &issued, &offline, &events).await;
    assert_crossed_once_each(&store, &budgets).await;

    // Every command relayed; `gpubill replay` into an empty database issues the same bytes.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !store.log().outbox_pending(1).await.unwrap().is_empty() {
        assert!(Instant::now() < deadline, "outbox not relayed in 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(engine);
    let fresh = fresh_db(gpubill_tests::Db::Postgres).await;
    let out = gpubill()
        .args(["replay", "--kafka-brokers", brokers(), "--database", &fresh])
        .args(["--usage-topic", &t.usage, "--commands-topic", &t.commands])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replayed = billing_store::Store::open(&fresh).await.unwrap();
    let bodies = async |s: &billing_store::Store| -> Vec<(String, String, i64, String)> {
        billing_store::db::query("select id, number, issued_at_ms, body from invoices order by id")
            .fetch_all(s.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect()
    };
    let original = bodies(&store).await;
    assert_eq!(original.len(), offline.len());
    assert!(
        original == bodies(&replayed).await,
        "replayed invoices differ"
    );
    // Issue 30: after ten SIGKILLs, every projection the replay rebuilds is byte-identical
    // (the folds that committed were recorded with their clocks; the killed ones were not).
    let (was, now) = (
        gpubill_tests::projections(&store).await,
        gpubill_tests::projections(&replayed).await,
    );
    if let Some(i) = (0..was.len().max(now.len())).find(|&i| was.get(i) != now.get(i)) {
        panic!(
            "replayed projections differ at row {i} of {}/{}: {:?} vs {:?}",
            was.len(),
            now.len(),
            was.get(i),
            now.get(i)
        );
    }
}

/// Creates each invoiced account with a budget of its invoice's total (50/80/100 %); the
/// accounts budgeted.
async fn budget_every_account(store: &billing_store::Store, offline: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for inv in offline {
        let account = inv["account"].as_str().unwrap().to_string();
        let total: rust_decimal::Decimal = inv["total"].as_str().unwrap().parse().unwrap();
        if total <= rust_decimal::Decimal::ZERO {
            continue;
        }
        let hash = billing_store::hash_key(&format!("key-{account}"));
        store
            .admin()
            .create_account(&account, &hash, 1_790_000_000_000)
            .await
            .unwrap();
        let budget = billing_core::notify::Budget {
            id: "whole".into(),
            account: account.clone(),
            scope: billing_core::notify::BudgetScope::Account(account.clone()),
            amount: total,
            thresholds: [50, 80, 100].map(rust_decimal::Decimal::from).to_vec(),
            forecast: false,
            action: billing_core::notify::BudgetAction::Notify,
        };
        store
            .notify()
            .change_settings(
                &account,
                move |s| {
                    s.budgets.insert("whole".into(), budget);
                    Ok(())
                },
                1_790_000_000_000,
            )
            .await
            .unwrap();
        out.push(account);
    }
    assert!(!out.is_empty());
    out
}

/// Each budgeted account was told of 50, 80 and 100 % once each, in that order, seq 1 to 3.
async fn assert_crossed_once_each(store: &billing_store::Store, accounts: &[String]) {
    for account in accounts {
        let got: Vec<(i64, String, String)> = store
            .notify()
            .notifications(Some(account), 0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|n| {
                (
                    n.seq,
                    n.kind,
                    n.body["data"]["threshold_percent"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect();
        let want: Vec<(i64, String, String)> = [(1, "50"), (2, "80"), (3, "100")]
            .into_iter()
            .map(|(seq, t)| (seq, "budget.crossed".to_string(), t.to_string()))
            .collect();
        assert_eq!(got, want, "{account}");
    }
}

/// Events an engine process accepted, from its /metrics.
async fn accepted(port: u16) -> u64 {
    let Ok(r) = reqwest::get(format!("http://127.0.0.1:{port}/metrics")).await else {
        return 0;
    };
    let text = r.text().await.unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("gpubill_events_total{outcome=\"accepted\"}"))
        .and_then(|l| l.split_whitespace().last()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_share_four_partitions_and_one_is_killed_mid_stream() {
    let dir = dir("pair");
    let (events_path, events) = simulate(&dir, 64, 86_400);
    let offline = offline(&dir, &events_path);
    let t = topics("pair").await;
    let total = events.len() as i64;
    let db = fresh_db(gpubill_tests::Db::Postgres).await;
    let book = dir.join("book.toml");
    // Issue 28: budgets of every account, crossed while two engines fold and one dies.
    let store = billing_store::Store::open(&db).await.unwrap();
    let budgets = budget_every_account(&store, &offline).await;
    // A session timeout of 20 s: the group's first join waits ~10 s for members (tansu), so
    // both engines join its first generation however long the second takes to start (found:
    // one that joined after it waited for a rebalance tansu never started, 90 s and more).
    let session = ["--kafka-session-timeout-ms", "20000"];
    let a = Engine::start_with(&db, &t, &dir.join("a"), &book, &session);
    // The second one once the first serves: the price book is uploaded once (two engines
    // uploading it at the same moment: one of them may be refused and exit).
    a.wait_serving().await;
    let b = Engine::start_with(&db, &t, &dir.join("b"), &book, &session);
    b.wait_serving().await;
    // The fleet reports a slice at a time until both engines hold partitions and have folded
    // some (a group join takes about half the session timeout with tansu: an engine that
    // found every record already there folded them all before the other one joined).
    let mut rest = events.as_slice();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (fa, fb) = (accepted(a.port).await, accepted(b.port).await);
        if fa > 0 && fb > 0 {
            eprintln!("engine a folded {fa} events, engine b {fb}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "both engines never folded (a {fa}, b {fb})"
        );
        let (slice, later) = rest.split_at(rest.len().min(1_000));
        produce_events(&t.usage, slice).await;
        rest = later;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Kill one while both hold partitions and records remain: the rest arrives at once.
    produce_events(&t.usage, rest).await;
    let at = folded(&store, &t.usage).await;
    a.kill();
    assert!(at < total, "killed after the end ({at} of {total})");
    // The survivor takes the dead one's partitions after the session timeout.
    wait_folded(&store, &t.usage, total, Duration::from_secs(120)).await;
    let issued = close(b.port).await;
    assert_exact(&store, &issued, &offline, &events).await;
    assert_crossed_once_each(&store, &budgets).await;
}

/// Issue 24, item 10: `serve` against a commands topic of 4 partitions (what a broker that
/// auto-creates topics made of it) refuses to start, naming the topic, instead of serving
/// until `gpubill replay` refuses the topic long after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_start_when_the_commands_topic_has_4_partitions() {
    let t = topics("partitioned-commands").await;
    let commands = format!("{}.commands4", t.usage);
    create_topic(&commands, 4).await;
    let data = dir("partitioned-commands");
    let mut child = gpubill()
        .args(["serve", "--kafka-brokers", brokers()])
        .args(["--usage-topic", &t.usage, "--commands-topic", &commands])
        .args([
            "--invoices-topic",
            &t.invoices,
            "--dead-letter-topic",
            &t.dlq,
        ])
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .arg("--data-dir")
        .arg(&data)
        .env("GPUBILL_ADMIN_TOKEN", ADMIN)
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve still running 60 s after start: it did not refuse the topic");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("the commands topic {commands} has 4 partitions")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&data);
}

/// Issue 29 as an operator runs it: two `gpubill serve --shard` processes on two PostgreSQL
/// servers, the directory made by `gpubill shards add`, and a tree moved by `gpubill shards
/// move` between two halves of the fleet's reports. The two shards' invoices together are
/// `gpubill rate`'s, each account's on the shard that holds its tree, and either shard's API
/// answers for every account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shard_processes_and_a_move_bill_like_gpubill_rate() {
    use billing_store::shard::shard_of_root;
    let dir = dir("shards");
    let (events_path, events) = simulate(&dir, 16, 86_400);
    let offline = offline(&dir, &events_path);
    let t = topics("shards").await;
    let book = dir.join("book.toml");
    let directory = gpubill_tests::fresh_db_at(&gpubill_tests::postgres_base()).await;
    let dbs = [
        gpubill_tests::fresh_db_at(&gpubill_tests::postgres_base()).await,
        gpubill_tests::fresh_db_at(&gpubill_tests::postgres_second_base()).await,
    ];
    let mut engines = Vec::new();
    for (i, db) in dbs.iter().enumerate() {
        let shard = format!("{i}/2");
        let more = ["--shard", &shard, "--shard-directory", &directory];
        let e = Engine::start_with(db, &t, &dir.join(format!("s{i}")), &book, &more);
        e.wait_serving().await;
        let api = format!("http://127.0.0.1:{}", e.port);
        let out = gpubill()
            .args([
                "shards",
                "--directory",
                &directory,
                "add",
                "--shard",
                &shard,
            ])
            .args(["--database", db, "--api", &api])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        engines.push(e);
    }
    let out = gpubill()
        .args(["shards", "--directory", &directory, "list"])
        .output()
        .unwrap();
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|s| s["shard"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1]
    );
    let stores = [
        billing_store::Store::open(&dbs[0]).await.unwrap(),
        billing_store::Store::open(&dbs[1]).await.unwrap(),
    ];
    let (first, rest) = events.split_at(events.len() / 2);
    produce_events(&t.usage, first).await;
    for s in &stores {
        wait_folded(s, &t.usage, first.len() as i64, Duration::from_secs(90)).await;
    }
    // Shard 0's first account (no organization here: each account is its own tree).
    let accounts: std::collections::BTreeSet<String> = offline
        .iter()
        .map(|i| i["account"].as_str().unwrap().to_string())
        .collect();
    let moved = accounts
        .iter()
        .find(|a| shard_of_root(a, 2) == 0)
        .expect("an account on shard 0")
        .clone();
    assert!(
        accounts.iter().any(|a| shard_of_root(a, 2) == 1),
        "both shards hold accounts"
    );
    let out = gpubill()
        .args([
            "shards",
            "--directory",
            &directory,
            "move",
            "--root",
            &moved,
        ])
        .args(["--to", "1", "--usage-topic", &t.usage])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["from"].as_u64(), report["to"].as_u64()),
        (Some(0), Some(1))
    );
    produce_events(&t.usage, rest).await;
    let total = events.len() as i64;
    for s in &stores {
        wait_folded(s, &t.usage, total, Duration::from_secs(90)).await;
    }
    let mut issued: Vec<Value> = Vec::new();
    for (i, e) in engines.iter().enumerate() {
        for invoice in close(e.port).await {
            let account = invoice["account"].as_str().unwrap().to_string();
            let holder = if account == moved {
                1
            } else {
                shard_of_root(&account, 2) as usize
            };
            assert_eq!(holder, i, "{account} invoiced by shard {i}");
            issued.push(section6(&invoice));
        }
    }
    let by_account = |v: &Vec<Value>| -> std::collections::BTreeMap<String, Value> {
        v.iter()
            .map(|i| (i["account"].as_str().unwrap().to_string(), i.clone()))
            .collect()
    };
    assert!(
        by_account(&issued) == by_account(&offline),
        "the shards' invoices differ from gpubill rate"
    );
    // Shard 0 answers for the moved account by forwarding to shard 1: the same recomputed
    // November (which shard 0, without the account's ledger any more, could not give).
    let cost = async |port: u16| -> (u16, String) {
        let r = reqwest::Client::new()
            .get(format!(
                "http://127.0.0.1:{port}/v1/admin/adjustments?period=2026-11&account={moved}"
            ))
            .bearer_auth(ADMIN)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    let (via_0, at_1) = (cost(engines[0].port).await, cost(engines[1].port).await);
    assert_eq!(via_0.0, 200, "{}", via_0.1);
    assert!(via_0.1.contains(&moved), "{}", via_0.1);
    assert_eq!(via_0, at_1);
}
