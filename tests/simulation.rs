//! Issue 14: a deterministic simulation of the engine with injected faults. One seed drives a
//! schedule over November 2026 for 2 to 4 accounts: ingest batches (new, redelivered,
//! shuffled, conflicting, hostile records), price book versions, credit terms, quotas,
//! authorizations and releases, then the close of 2026-11. Faults: engine restarts (some
//! losing the answer of the request in flight, which the client then retries) and, on
//! PostgreSQL, a TCP proxy inside the test that cuts every live connection (mid-transaction)
//! or stalls at a message count the seed chose. After each run: the invoices equal
//! `gpubill rate` over the accepted events, no record is both accepted and dead-lettered,
//! every hold is accounted for, each quota decision is recorded once, `verify` is clean.
//!
//! `GPUBILL_SIM_SEEDS=N` runs N SQLite seeds and N/10 PostgreSQL seeds (default 200 and 20);
//! `GPUBILL_SIM_SEED=S` replays seed S alone on both backends. A failing seed names itself.
//! Soak: `GPUBILL_SIM_SEEDS=5000 cargo test --release -p gpubill-tests --test simulation -- --nocapture`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use billing_api::{AppState, router};
use billing_store::{Store, hash_key};
use gpubill_tests::*;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

/// 2026-11-01T00:00:00Z.
const NOV_1_S: i64 = DEC_2_2026_MS / 1000 - 31 * 86_400;
/// Attempts of one request before the run fails (faults are single events: a handful do).
const ATTEMPTS_MAX: u32 = 30;
/// How long a keyed retry may wait before the client calls its key stuck (the engine waits
/// up to 30 s for a claim; nothing else runs in a simulation).
const STUCK_KEY_WAIT: Duration = Duration::from_secs(3);
const ACCOUNTS: [&str; 4] = ["acme", "beta", "gamma", "delta"];
const SKUS: [&str; 2] = ["gpu.h100", "gpu.a100"];

// ---- the seed's randomness -------------------------------------------------------------------

/// splitmix64: the only source of decisions in a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn permille(&mut self, p: u64) -> bool {
        self.below(1000) < p
    }
}

// ---- what the schedule sends ------------------------------------------------------------------

/// A usage event; `[lease, resource, sku, quantity]`.
fn usage(
    source: u32,
    id: &str,
    account: &str,
    data: [&str; 4],
    (start_s, end_s): (i64, i64),
) -> String {
    let [lease, resource, sku, quantity] = data;
    let t = billing_core::timestamp::format_secs;
    json!({"specversion":"1.0","id":id,"source":format!("node/{source}"),"type":"gpu.usage","subject":account,
        "data":{"lease":lease,"resource":resource,"sku":sku,"quantity":quantity,"start":t(start_s),"end":t(end_s)}})
    .to_string()
}

/// A new valid event: mostly November, a few on 2026-12-01 (the open period, where quotas
/// and hold captures act).
fn valid_event(rng: &mut Rng, n: u64, accounts: &[&str]) -> String {
    let account = accounts[rng.below(accounts.len() as u64) as usize];
    let lease = format!("L-{account}-{}", rng.below(3));
    let resource = format!("g{}", rng.below(4));
    let sku = SKUS[rng.below(2) as usize];
    let quantity = ["1", "2", "4", "8", "0.25"][rng.below(5) as usize];
    let span_s = 60 * (1 + rng.below(60) as i64);
    let start_s = if rng.permille(100) {
        NOV_1_S + 30 * 86_400 + rng.below(20 * 3600) as i64
    } else {
        NOV_1_S + rng.below(30 * 86_400 - 3600) as i64
    };
    usage(
        1 + rng.below(3) as u32,
        &format!("e{n}"),
        account,
        [&lease, &resource, sku, quantity],
        (start_s, start_s + span_s),
    )
}

/// A record the engine must dead-letter with a reason (after tests/hostile.rs `hostile()`),
/// and whether it must travel alone (a truncated record would swallow the rest of a batch).
fn hostile_record(rng: &mut Rng, n: u64) -> (bool, String) {
    let base = usage(
        9,
        &format!("h{n}"),
        "acme",
        ["L1", "g0", "gpu.h100", "1"],
        (NOV_1_S + 86_400, NOV_1_S + 86_460),
    );
    let with = |from: &str, to: &str| base.replacen(from, to, 1);
    let kind = rng.below(10);
    let record = match kind {
        0 => base[..1 + rng.below(base.len() as u64 - 2) as usize].to_string(),
        1 => with("\"specversion\":\"1.0\"", "\"specversion\":\"0.3\""),
        2 => with(
            "\"subject\":\"acme\"",
            ["\"subject\":\"\"", "\"subject\":\"a/b\"", "\"subject\":7"][rng.below(3) as usize],
        ),
        3 => with(
            "\"quantity\":\"1\"",
            [
                "\"quantity\":\"-1\"",
                "\"quantity\":\"NaN\"",
                "\"quantity\":\"1e3\"",
            ][rng.below(3) as usize],
        ),
        4 => with(&format!("\"id\":\"h{n}\","), ""),
        5 => with("\"type\":\"gpu.usage\"", "\"type\":\"gpu.usagee\""),
        6 => format!("{},}}", &base[..base.len() - 1]),
        7 => with("\"lease\":\"L1\"", "\"lease\":\"L\u{1}1\""),
        8 => ["42", "\"str\"", "null", "[]"][rng.below(4) as usize].to_string(),
        _ => with(
            "\"sku\":\"gpu.h100\"",
            &format!("\"sku\":\"{}\"", "s".repeat(300)),
        ),
    };
    (kind == 0, record)
}

/// A price book version: the rates, tax and a discount move between versions.
fn price_book(rng: &mut Rng, accounts: &[&str]) -> String {
    let mut book = format!(
        "currency = \"USD\"\ntimezone = \"UTC\"\n\n[skus.\"gpu.h100\"]\nrate_per_hour = \"{}.{:02}\"\nminimum_seconds = {}\n\n[skus.\"gpu.a100\"]\ntiers = [ {{ up_to_hours = {}, rate_per_hour = \"{}.00\" }}, {{ rate_per_hour = \"{}.50\" }} ]\n\n[tax]\nrate = \"0.0{}\"\n",
        20 + rng.below(20),
        rng.below(100),
        [1, 60, 300][rng.below(3) as usize],
        1 + rng.below(10),
        10 + rng.below(10),
        5 + rng.below(5),
        rng.below(10),
    );
    if rng.permille(500) {
        let a = accounts[rng.below(accounts.len() as u64) as usize];
        book.push_str(&format!(
            "\n[[discounts]]\naccount = \"{a}\"\npercent = \"{}\"\n",
            5 + rng.below(20)
        ));
    }
    book
}

// ---- the faulty PostgreSQL link ------------------------------------------------------------

/// A TCP proxy to PostgreSQL that drops every live connection, or stalls, when its countdown
/// of forwarded messages (both directions) reaches zero: the point comes from the seed.
struct Proxy {
    port: u16,
    cut_in: Arc<AtomicI64>,
    stall_in: Arc<AtomicI64>,
    cuts: Arc<AtomicU64>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let link = Link {
            cut_in: Arc::new(AtomicI64::new(0)),
            stall_in: Arc::new(AtomicI64::new(0)),
            cuts: Arc::new(AtomicU64::new(0)),
            generation: Arc::new(tokio::sync::watch::channel(0u64).0),
        };
        let each = link.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                    continue;
                };
                tokio::spawn(each.clone().run(client, server));
            }
        });
        Proxy {
            port,
            cut_in: link.cut_in,
            stall_in: link.stall_in,
            cuts: link.cuts,
            generation: link.generation,
            task,
        }
    }

    /// Cuts every connection at the `n`th message forwarded from now (that message is lost).
    fn cut_after(&self, n: i64) {
        self.cut_in.store(n, Ordering::SeqCst);
    }

    fn stall_after(&self, n: i64) {
        self.stall_in.store(n, Ordering::SeqCst);
    }

    fn disarm(&self) {
        self.cut_in.store(0, Ordering::SeqCst);
        self.stall_in.store(0, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.generation.send_modify(|g| *g += 1);
    }
}

#[derive(Clone)]
struct Link {
    cut_in: Arc<AtomicI64>,
    stall_in: Arc<AtomicI64>,
    cuts: Arc<AtomicU64>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Link {
    async fn run(self, client: tokio::net::TcpStream, server: tokio::net::TcpStream) {
        let (cr, cw) = client.into_split();
        let (sr, sw) = server.into_split();
        let mut cut = self.generation.subscribe();
        // Whichever direction ends first ends the connection: both halves are dropped.
        tokio::select! {
            _ = self.clone().pump(cr, sw) => {}
            _ = self.clone().pump(sr, cw) => {}
            _ = cut.changed() => {}
        }
    }

    async fn pump(
        self,
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
    ) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if self.stall_in.fetch_sub(1, Ordering::SeqCst) == 1 {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            if self.cut_in.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.cuts.fetch_add(1, Ordering::SeqCst);
                self.generation.send_modify(|g| *g += 1);
                return;
            }
            if to.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    }
}

// ---- the client: retries as an agent or an operator would ---------------------------------

#[derive(Clone)]
struct Req {
    method: &'static str,
    uri: String,
    token: &'static str,
    ctype: &'static str,
    body: String,
    /// `Idempotency-Key` (admin commands).
    key: Option<String>,
}

/// An app like `TestApp::open`, that reports a failed open (a cut link) instead of panicking.
async fn open(url: &str) -> Result<TestApp, String> {
    let store = Store::open(url)
        .await
        .map_err(|e| e.to_string())?
        .with_dedupe_horizon(CENTURY_S);
    let state = AppState {
        store: Arc::new(store),
        admin_token_hash: hash_key(ADMIN),
        ingest_token_hash: Some(hash_key(INGEST)),
        clock: clock_at(DEC_2_2026_MS),
        sink: None,
        metrics: Some(metrics_handle()),
        limiter: Default::default(),
        usage_answers: Default::default(),
    };
    Ok(TestApp {
        app: router(state.clone()),
        state,
        url: url.to_string(),
    })
}

async fn open_retrying(url: &str) -> TestApp {
    let mut last = String::new();
    for _ in 0..ATTEMPTS_MAX {
        match open(url).await {
            Ok(t) => return t,
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the engine does not open: {last}")
}

async fn once(t: &TestApp, r: &Req) -> (StatusCode, Value) {
    let mut req = Request::builder()
        .method(r.method)
        .uri(&r.uri)
        .header("content-type", r.ctype)
        .header("authorization", format!("Bearer {}", r.token));
    if let Some(k) = &r.key {
        req = req.header("idempotency-key", k);
    }
    let resp = t
        .app
        .clone()
        .oneshot(req.body(Body::from(r.body.clone())).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, v)
}

#[derive(Default, Debug, Clone, Copy)]
struct Stats {
    steps: u64,
    restarts: u64,
    lost_answers: u64,
    cuts_armed: u64,
    stalls_armed: u64,
    retries: u64,
    records_sent: u64,
    /// Admin commands whose `Idempotency-Key` stayed claimed (see `Sim::stuck_key`).
    stuck_keys: u64,
    /// Fail points armed: the engine dies inside a fold, a close or a wallet movement.
    failpoints_armed: u64,
}

/// The schedule's effects as the client knows them: what the invariants are checked against.
#[derive(Default)]
struct Expected {
    /// First content of every valid (source, id) sent.
    valid: BTreeMap<(String, String), String>,
    /// Valid events acknowledged (200) at least once: conflicts only target these.
    acked: Vec<(String, String)>,
    /// Hostile and conflicting records in attempts answered 200 (surely dead-lettered) and in
    /// attempts with no answer (perhaps).
    dead_sure: u64,
    dead_maybe: u64,
    book: Option<String>,
    credits: BTreeMap<String, String>,
    /// Holds granted by an answer; those released by us (200); authorizations whose answer
    /// was lost (each may have left a hold we never heard of).
    granted: BTreeSet<String>,
    released: BTreeSet<String>,
    authorize_unanswered: u64,
}

struct Sim {
    app: Option<TestApp>,
    url: String,
    rng: Rng,
    proxy: Option<Proxy>,
    stats: Stats,
    /// The next request's answer is lost to a restart (the engine was killed after its
    /// effect, before its answer reached the client).
    lose_next: bool,
}

impl Sim {
    fn app(&self) -> &TestApp {
        self.app.as_ref().unwrap()
    }

    async fn restart(&mut self) {
        if let Some(p) = &self.proxy {
            p.disarm();
        }
        let t = self.app.take().unwrap();
        t.shutdown().await;
        self.app = Some(open_retrying(&self.url).await);
        self.stats.restarts += 1;
    }

    /// Sends until an answer that is not a server error; `on_attempt(answered, status, body)`
    /// sees every attempt (a lost answer counts as answered: its effect happened).
    async fn send(
        &mut self,
        r: &Req,
        mut on_attempt: impl FnMut(bool, StatusCode, &Value),
    ) -> (StatusCode, Value) {
        if std::mem::take(&mut self.lose_next) {
            let (s, v) = once(self.app(), r).await;
            on_attempt(!s.is_server_error(), s, &v);
            self.stats.lost_answers += 1;
            self.restart().await;
        }
        let mut r = r.clone();
        let mut last = (StatusCode::OK, Value::Null);
        for attempt in 0..ATTEMPTS_MAX {
            if attempt > 0 {
                self.stats.retries += 1;
                tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
            }
            // The client is sequential: a retry that waits on its own key waits on nobody.
            let Ok((s, v)) = tokio::time::timeout(STUCK_KEY_WAIT, once(self.app(), &r)).await
            else {
                self.stuck_key(&mut r).await;
                continue;
            };
            on_attempt(!s.is_server_error(), s, &v);
            if !s.is_server_error() {
                return (s, v);
            }
            last = (s, v);
        }
        panic!(
            "{} {} failed {ATTEMPTS_MAX} times: {} {}",
            r.method, r.uri, last.0, last.1
        )
    }

    /// Found by this simulation (PostgreSQL with connection cuts): when the link is cut
    /// around an admin command, its `Idempotency-Key` claim can stay `running` (status 0)
    /// with no request running it. The engine now takes such a claim over once it is
    /// `billing_store::idempotency::STALE_CLAIM_MS` old on its clock (tests/concurrency.rs,
    /// `a_stale_idempotency_claim_is_taken_over`); the simulation's clock stands still, so
    /// here the client goes on with a new key, as an operator in a hurry would, and the run
    /// counts it. Strict mode fails the seed instead.
    async fn stuck_key(&mut self, r: &mut Req) {
        use sqlx::Row;
        let key = r.key.clone().expect("only keyed requests wait on a claim");
        let row =
            sqlx::query("select status from idempotency_keys where scope = 'admin' and key = $1")
                .bind(&key)
                .fetch_optional(self.app().state.store.pool())
                .await
                .ok()
                .flatten()
                .map(|r| r.get::<i64, _>(0));
        assert!(
            std::env::var_os("GPUBILL_SIM_STRICT").is_none(),
            "{} {}: Idempotency-Key {key:?} stuck (claim status {row:?}): every retry waits on a \
             request nobody runs",
            r.method,
            r.uri
        );
        self.stats.stuck_keys += 1;
        r.key = Some(format!("{key}~{}", self.stats.stuck_keys));
    }

    async fn admin(
        &mut self,
        method: &'static str,
        uri: String,
        body: String,
        key: String,
    ) -> (StatusCode, Value) {
        let r = Req {
            method,
            uri,
            token: ADMIN,
            ctype: "application/json",
            body,
            key: Some(key),
        };
        self.send(&r, |_, _, _| {}).await
    }
}

// ---- one run ----------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Outcome {
    holds: u64,
    decisions: u64,
    stats: Stats,
    cuts: u64,
    events: u64,
}

async fn run(seed: u64, db: Db) -> Outcome {
    let mut rng = Rng(seed
        ^ if db == Db::Postgres {
            0x5eed_0000_0000
        } else {
            0
        });
    let accounts: Vec<&str> = ACCOUNTS[..2 + rng.below(3) as usize].to_vec();
    let url = fresh_db(db).await;
    let (proxy, url) = match db {
        Db::Sqlite => (None, url),
        Db::Postgres => {
            let base = postgres_base();
            let upstream = base.rsplit('@').next().unwrap().to_string();
            let p = Proxy::start(upstream.clone()).await;
            let via = url.replacen(&upstream, &format!("127.0.0.1:{}", p.port), 1);
            (Some(p), via)
        }
    };
    let app = open_retrying(&url).await;
    let mut sim = Sim {
        app: Some(app),
        url,
        rng,
        proxy,
        stats: Stats::default(),
        lose_next: false,
    };
    let mut exp = Expected::default();
    setup(&mut sim, &mut exp, &accounts).await;
    let steps = 10 + sim.rng.below(30);
    let mut n = 0u64;
    for step in 0..steps {
        sim.stats.steps += 1;
        fault(&mut sim).await;
        match sim.rng.below(100) {
            0..55 => ingest(&mut sim, &mut exp, &accounts, &mut n, step).await,
            55..62 => upload_book(&mut sim, &mut exp, &accounts, step).await,
            62..68 => credit(&mut sim, &mut exp, &accounts, step).await,
            68..76 => quotas(&mut sim, &accounts, step).await,
            76..90 => authorize(&mut sim, &mut exp, &accounts).await,
            _ => release(&mut sim, &mut exp).await,
        }
    }
    fault(&mut sim).await;
    let (s, v) = sim
        .admin(
            "POST",
            "/v1/admin/invoices/close?period=2026-11".into(),
            String::new(),
            "close-2026-11".into(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "close: {v}");
    let cuts = sim.proxy.as_ref().map_or(0, |p| {
        p.disarm();
        p.cuts.load(Ordering::SeqCst)
    });
    let (holds, decisions) = check(&sim, &exp).await;
    let events = exp.valid.len() as u64;
    let stats = sim.stats;
    if let Some(t) = sim.app.take() {
        t.shutdown().await;
    }
    Outcome {
        holds,
        decisions,
        stats,
        cuts,
        events,
    }
}

/// Accounts, the first price book and one valid event per account (every account is billed).
async fn setup(sim: &mut Sim, exp: &mut Expected, accounts: &[&str]) {
    for a in accounts {
        let (s, v) = sim
            .admin(
                "POST",
                "/v1/admin/accounts".into(),
                json!({"id": a}).to_string(),
                format!("account-{a}"),
            )
            .await;
        // 409: the account exists, from an attempt under a key that got stuck.
        assert!(
            s == StatusCode::CREATED || s == StatusCode::CONFLICT && sim.stats.stuck_keys > 0,
            "{s}: {v}"
        );
    }
    upload_book(sim, exp, accounts, u64::MAX).await;
    let first: Vec<String> = accounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let s = NOV_1_S + 3600 * i as i64;
            usage(
                1,
                &format!("first-{a}"),
                a,
                ["L0", "g0", "gpu.h100", "1"],
                (s, s + 600),
            )
        })
        .collect();
    send_batch(sim, exp, first, 0).await;
}

/// Before a step, the seed may restart the engine (perhaps losing the next answer), arm a
/// fail point (the engine dies inside a transaction), a connection cut or a stall on the
/// PostgreSQL link.
async fn fault(sim: &mut Sim) {
    if sim.rng.permille(80) {
        sim.restart().await;
    }
    if sim.rng.permille(100) {
        let points = billing_store::FAIL_POINTS;
        let point = points[sim.rng.below(points.len() as u64) as usize];
        let skip = sim.rng.below(3);
        sim.app().state.store.arm_failpoint(point, skip).unwrap();
        sim.stats.failpoints_armed += 1;
    }
    if sim.rng.permille(60) {
        sim.lose_next = true;
    }
    if let Some(p) = &sim.proxy {
        if sim.rng.permille(250) {
            p.cut_after(1 + sim.rng.below(40) as i64);
            sim.stats.cuts_armed += 1;
        }
        if sim.rng.permille(80) {
            p.stall_after(1 + sim.rng.below(40) as i64);
            sim.stats.stalls_armed += 1;
        }
    }
}

async fn ingest(sim: &mut Sim, exp: &mut Expected, accounts: &[&str], n: &mut u64, step: u64) {
    let mut records = Vec::new();
    for _ in 0..1 + sim.rng.below(30) {
        *n += 1;
        records.push(valid_event(&mut sim.rng, *n, accounts));
    }
    // Exact redeliveries of anything sent before.
    let sent: Vec<String> = exp.valid.values().cloned().collect();
    for _ in 0..sim.rng.below(6) {
        if !sent.is_empty() {
            records.push(sent[sim.rng.below(sent.len() as u64) as usize].clone());
        }
    }
    // Conflicting redeliveries: an acknowledged event's identity with other content.
    let mut bad = 0;
    for _ in 0..sim.rng.below(3) {
        if !exp.acked.is_empty() {
            let who = exp.acked[sim.rng.below(exp.acked.len() as u64) as usize].clone();
            let mut v: Value = serde_json::from_str(&exp.valid[&who]).unwrap();
            v["data"]["quantity"] = json!(format!("{}", 16 + sim.rng.below(100)));
            records.push(v.to_string());
            bad += 1;
        }
    }
    let mut alone = Vec::new();
    for k in 0..sim.rng.below(4) {
        match hostile_record(&mut sim.rng, step * 10 + k) {
            (true, r) => alone.push(r),
            (false, r) => {
                records.push(r);
                bad += 1;
            }
        }
    }
    shuffle(&mut records, sim.rng.next());
    send_batch(sim, exp, records, bad).await;
    for r in alone {
        send_one_hostile(sim, exp, r).await;
    }
}

/// A record that cannot share a batch, sent alone as a structured CloudEvent.
async fn send_one_hostile(sim: &mut Sim, exp: &mut Expected, record: String) {
    sim.stats.records_sent += 1;
    let req = Req {
        method: "POST",
        uri: "/v1/events".into(),
        token: INGEST,
        ctype: "application/cloudevents+json",
        body: record.clone(),
        key: None,
    };
    let (mut sure, mut maybe) = (0, 0);
    let (s, v) = sim
        .send(&req, |answered, _, _| {
            if answered {
                sure += 1;
            } else {
                maybe += 1;
            }
        })
        .await;
    exp.dead_sure += sure;
    exp.dead_maybe += maybe;
    assert_eq!(
        (s, v["rejected"].as_u64()),
        (StatusCode::OK, Some(1)),
        "{record}: {v}"
    );
}

/// Sends one batch (`bad` of its records must be dead-lettered) until answered; remembers
/// what it holds.
async fn send_batch(sim: &mut Sim, exp: &mut Expected, records: Vec<String>, bad: u64) {
    for r in &records {
        let Ok(v) = serde_json::from_str::<Value>(r) else {
            continue;
        };
        if let (Some(src), Some(id)) = (v["source"].as_str(), v["id"].as_str())
            && src.starts_with("node/")
            && !src.ends_with('9')
        {
            exp.valid
                .entry((src.to_string(), id.to_string()))
                .or_insert_with(|| r.clone());
        }
    }
    sim.stats.records_sent += records.len() as u64;
    let req = Req {
        method: "POST",
        uri: "/v1/events".into(),
        token: INGEST,
        ctype: "application/cloudevents-batch+json",
        body: format!("[{}]", records.join(",")),
        key: None,
    };
    let (mut sure, mut maybe) = (0, 0);
    let (s, v) = sim
        .send(&req, |answered, _, _| {
            if answered {
                sure += bad;
            } else {
                maybe += bad;
            }
        })
        .await;
    exp.dead_sure += sure;
    exp.dead_maybe += maybe;
    assert_eq!(s, StatusCode::OK, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), records.len(), "{v}");
    for (r, record) in results.iter().zip(&records) {
        let status = r["status"].as_str().unwrap_or_default();
        let identity = serde_json::from_str::<Value>(record).ok().and_then(|e| {
            Some((
                e["source"].as_str()?.to_string(),
                e["id"].as_str()?.to_string(),
            ))
        });
        match identity
            .as_ref()
            .and_then(|i| exp.valid.get(i).map(|c| (i, c)))
        {
            Some((i, content)) if content == record => {
                assert!(
                    status == "accepted" || status == "duplicate",
                    "{record}: {r}"
                );
                if !exp.acked.contains(i) {
                    exp.acked.push(i.clone());
                }
            }
            Some(_) => assert_eq!(r["reason"], "conflict", "{record}: {r}"),
            None => {
                assert_eq!(status, "rejected", "{record}: {r}");
                assert!(r["reason"].as_str().is_some_and(|x| !x.is_empty()), "{r}");
            }
        }
    }
}

async fn upload_book(sim: &mut Sim, exp: &mut Expected, accounts: &[&str], step: u64) {
    let book = price_book(&mut sim.rng, accounts);
    let r = Req {
        method: "PUT",
        uri: "/v1/admin/pricebook".into(),
        token: ADMIN,
        ctype: "application/toml",
        body: book.clone(),
        key: Some(format!("book-{step}")),
    };
    let (s, v) = sim.send(&r, |_, _, _| {}).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    exp.book = Some(book);
}

async fn credit(sim: &mut Sim, exp: &mut Expected, accounts: &[&str], step: u64) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let amount = format!("{}.{:02}", sim.rng.below(80), sim.rng.below(100));
    let body =
        json!({"amount": amount, "from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z"});
    let (s, v) = sim
        .admin(
            "PUT",
            format!("/v1/admin/accounts/{a}/terms/credits/sim-{a}"),
            body.to_string(),
            format!("credit-{step}"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    exp.credits.insert(a.to_string(), amount);
}

async fn quotas(sim: &mut Sim, accounts: &[&str], step: u64) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let body = json!({
        "prepaid_balance": format!("{}.00", 50 + sim.rng.below(500)),
        "gpu_hours": {"gpu.h100": format!("{}", 1 + sim.rng.below(40))},
    });
    let (s, v) = sim
        .admin(
            "PUT",
            format!("/v1/admin/accounts/{a}/quotas"),
            body.to_string(),
            format!("quotas-{step}"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

async fn authorize(sim: &mut Sim, exp: &mut Expected, accounts: &[&str]) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let mut body = json!({"account": a, "sku": SKUS[sim.rng.below(2) as usize],
        "quantity": format!("{}", 1 + sim.rng.below(8)), "seconds": 60 + sim.rng.below(3600)});
    if sim.rng.permille(500) {
        body["lease"] = json!(format!("L-{a}-{}", sim.rng.below(3)));
    }
    let r = Req {
        method: "POST",
        uri: "/v1/authorize".into(),
        token: INGEST,
        ctype: "application/json",
        body: body.to_string(),
        key: None,
    };
    // Not idempotent: every attempt but the last answered one may have left a hold.
    let mut attempts = 0;
    let (s, v) = sim.send(&r, |_, _, _| attempts += 1).await;
    exp.authorize_unanswered += attempts - 1;
    assert_eq!(s, StatusCode::OK, "{v}");
    match v["decision"].as_str() {
        Some("allowed") => {
            exp.granted.insert(v["hold"].as_str().unwrap().to_string());
        }
        Some("denied") => {}
        _ => panic!("authorize: {v}"),
    }
}

async fn release(sim: &mut Sim, exp: &mut Expected) {
    let open: Vec<&String> = exp.granted.difference(&exp.released).collect();
    if open.is_empty() {
        return;
    }
    let id = open[sim.rng.below(open.len() as u64) as usize].clone();
    let r = Req {
        method: "POST",
        uri: format!("/v1/holds/{id}/release"),
        token: INGEST,
        ctype: "application/json",
        body: String::new(),
        key: None,
    };
    let mut released = false;
    let (s, v) = sim
        .send(&r, |_, s, v| {
            released |= s == StatusCode::OK && v["status"] == "released"
        })
        .await;
    assert!(
        s == StatusCode::OK || s == StatusCode::CONFLICT,
        "release {id}: {s} {v}"
    );
    if released {
        exp.released.insert(id);
    }
}

// ---- the invariants -------------------------------------------------------------------------

/// Checks every invariant; returns how many holds and quota decisions the run left.
async fn check(sim: &Sim, exp: &Expected) -> (u64, u64) {
    use sqlx::Row;
    let store = &sim.app().state.store;
    // (a) The invoices equal `gpubill rate` over the accepted events, with the book in force
    // and the credit terms written into it.
    let mut book = exp.book.clone().unwrap();
    for (a, amount) in &exp.credits {
        book.push_str(&format!(
            "\n[[credits]]\naccount = \"{a}\"\nid = \"sim-{a}\"\namount = \"{amount}\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2026-12-01T00:00:00Z\"\n"
        ));
    }
    let events: Vec<String> = exp.valid.values().cloned().collect();
    let offline = offline_invoices(&book, &events, "2026-11");
    let mut issued: Vec<Value> = store
        .invoices(None, Some("2026-11"))
        .await
        .unwrap()
        .iter()
        .map(|i| section6(&serde_json::to_value(&i.invoice).unwrap()))
        .collect();
    issued.sort_by(|a, b| a["account"].as_str().cmp(&b["account"].as_str()));
    assert_eq!(issued.len(), offline.len(), "accounts differ: {issued:?}");
    for (got, want) in issued.iter().zip(&offline) {
        assert_eq!(got, want, "invoice differs from gpubill rate");
    }
    // (b) Every distinct valid event accepted once; the dead letters are the hostile and
    // conflicting records, each with a reason, none of them an accepted event's content.
    assert_eq!(store.event_count().await.unwrap(), exp.valid.len() as i64);
    let mut dead = Vec::new();
    loop {
        let after = dead.last().map_or(0, |d: &billing_store::DeadLetter| d.seq);
        let page = store.dead_letters(after, 1000).await.unwrap();
        if page.is_empty() {
            break;
        }
        dead.extend(page);
    }
    let n = dead.len() as u64;
    assert!(
        exp.dead_sure <= n && n <= exp.dead_sure + exp.dead_maybe,
        "{n} dead letters, expected {} (+ up to {} from unanswered attempts)",
        exp.dead_sure,
        exp.dead_maybe
    );
    for d in &dead {
        assert!(!d.reason.is_empty(), "{d:?}");
        if let (Some(src), Some(id)) = (&d.source, &d.event_id)
            && let Some(content) = exp.valid.get(&(src.clone(), id.clone()))
        {
            let a: Option<Value> = serde_json::from_str(content).ok();
            let b: Option<Value> = serde_json::from_str(&d.payload).ok();
            assert_ne!(a, b, "accepted and dead-lettered: {d:?}");
        }
    }
    // (c) Holds: each granted one exists once; ours released are released; holds we never
    // heard of come from unanswered authorizations, and nobody released them.
    let rows = sqlx::query("select id, status from holds")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let mut holds: HashMap<String, String> = HashMap::new();
    for r in rows {
        let id: String = r.get(0);
        assert!(
            holds.insert(id.clone(), r.get(1)).is_none(),
            "hold {id} twice"
        );
    }
    for id in &exp.granted {
        let status = holds.get(id).unwrap_or_else(|| panic!("hold {id} lost"));
        if exp.released.contains(id) {
            assert_eq!(status, "released", "hold {id}");
        } else {
            assert!(
                ["live", "captured", "expired", "released"].contains(&status.as_str()),
                "hold {id}: {status}"
            );
        }
    }
    let holds_n = holds.len() as u64;
    let unknown: Vec<_> = holds
        .iter()
        .filter(|(id, _)| !exp.granted.contains(*id))
        .collect();
    assert!(
        unknown.len() as u64 <= exp.authorize_unanswered,
        "{} holds nobody was told of, {} unanswered authorizations",
        unknown.len(),
        exp.authorize_unanswered
    );
    for (id, status) in unknown {
        assert_ne!(status, "released", "hold {id} released by nobody");
    }
    // (d) Quota decisions: ids unique, and no level decided twice in a row.
    let rows =
        sqlx::query("select id, account, quota, period, kind from quota_decisions order by seq")
            .fetch_all(store.pool())
            .await
            .unwrap();
    let mut ids = BTreeSet::new();
    let mut last: HashMap<(String, String, String), String> = HashMap::new();
    for r in rows {
        let id: String = r.get(0);
        assert!(ids.insert(id.clone()), "decision {id} twice");
        let kind: String = r.get(4);
        let prev = last.insert((r.get(1), r.get(2), r.get(3)), kind.clone());
        assert_ne!(
            prev.as_deref(),
            Some(kind.as_str()),
            "decision {id}: {kind} twice in a row"
        );
    }
    // The auditor's recomputation agrees.
    let report = store.verify(None).await.unwrap();
    assert!(
        report.differences.is_empty(),
        "verify: {:?}",
        report.differences
    );
    (holds_n, ids.len() as u64)
}

// ---- seeds --------------------------------------------------------------------------------

fn seeds(db: Db) -> Vec<u64> {
    if let Ok(s) = std::env::var("GPUBILL_SIM_SEED") {
        return vec![s.parse().expect("GPUBILL_SIM_SEED is a number")];
    }
    let n: u64 = std::env::var("GPUBILL_SIM_SEEDS")
        .ok()
        .map_or(200, |s| s.parse().expect("GPUBILL_SIM_SEEDS is a number"));
    match db {
        Db::Sqlite => (0..n).collect(),
        Db::Postgres => (0..(n / 10).max(1)).collect(),
    }
}

async fn run_seeds(db: Db) {
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    let (mut cuts, mut events, mut ran, mut holds, mut decisions) = (0, 0, 0, 0, 0);
    for seed in seeds(db) {
        match tokio::spawn(run(seed, db)).await {
            Ok(o) => {
                let s = o.stats;
                total.steps += s.steps;
                total.restarts += s.restarts;
                total.failpoints_armed += s.failpoints_armed;
                total.lost_answers += s.lost_answers;
                total.cuts_armed += s.cuts_armed;
                total.stalls_armed += s.stalls_armed;
                total.retries += s.retries;
                total.records_sent += s.records_sent;
                total.stuck_keys += s.stuck_keys;
                cuts += o.cuts;
                holds += o.holds;
                decisions += o.decisions;
                events += o.events;
                ran += 1;
            }
            Err(e) => panic!(
                "simulation seed {seed} on {db:?} failed ({e}); replay it with \
                 GPUBILL_SIM_SEED={seed} cargo test -p gpubill-tests --test simulation {}",
                format!("{db:?}").to_lowercase()
            ),
        }
    }
    eprintln!(
        "simulation {db:?}: {ran} seeds in {:.1} s: {} steps, {} distinct valid events, {} records sent, \
         {} restarts ({} lost answers), {} fail points armed, {} connection cuts ({} armed), {} stalls armed, {} retries, {} stuck idempotency keys; {holds} holds, {decisions} quota decisions",
        started.elapsed().as_secs_f64(),
        total.steps,
        events,
        total.records_sent,
        total.restarts,
        total.lost_answers,
        total.failpoints_armed,
        cuts,
        total.cuts_armed,
        total.stalls_armed,
        total.retries,
        total.stuck_keys
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    run_seeds(Db::Sqlite).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    run_seeds(Db::Postgres).await
}
