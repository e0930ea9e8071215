//! Helpers for gpubill's end-to-end tests: fresh databases on both backends, the app without
//! a socket, and requests.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use billing_api::{AppState, Clock, router};
use billing_store::{Store, hash_key};
use http_body_util::BodyExt;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tower::ServiceExt;

/// Runs one async scenario `name(db: Db)` as two tests, one per backend, in a module of its
/// name: `on_both!(name);` (the test file must `use gpubill_tests::*;`).
#[macro_export]
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(Db::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(Db::Postgres).await
            }
        }
    };
}

/// A dedupe horizon no test fixture falls out of.
pub const CENTURY_S: i64 = 100 * 365 * 86_400;

pub const ADMIN: &str = "admin-test-token";
pub const INGEST: &str = "ingest-test-token";

/// Where the tests find PostgreSQL (trust auth); `./scripts/test` starts it.
pub fn postgres_base() -> String {
    std::env::var("GPUBILL_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// The second PostgreSQL server (shards on two servers, issue 29); `./scripts/test` starts it
/// (`scripts/services.sh postgres-second`).
pub fn postgres_second_base() -> String {
    std::env::var("GPUBILL_TEST_POSTGRES_SECOND")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5433".into())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

pub const BOTH: [Db; 2] = [Db::Sqlite, Db::Postgres];

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh, empty database URL. PostgreSQL must be running: a test that needs it fails
/// loudly, never skips.
pub async fn fresh_db(db: Db) -> String {
    match db {
        Db::Sqlite => fresh_db_named(db, None).await,
        Db::Postgres => fresh_db_named(db, Some(&postgres_base())).await,
    }
}

/// A fresh, empty PostgreSQL database on the server at `base` (`postgres://user@host:port`).
pub async fn fresh_db_at(base: &str) -> String {
    fresh_db_named(Db::Postgres, Some(base)).await
}

async fn fresh_db_named(db: Db, base: Option<&str>) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!(
        "gpubill_t_{}_{}_{n}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            % 1_000_000_000
    );
    match db {
        Db::Sqlite => {
            let dir: PathBuf = std::env::temp_dir().join("gpubill-tests");
            std::fs::create_dir_all(&dir).unwrap();
            format!("sqlite://{}", dir.join(format!("{name}.db")).display())
        }
        Db::Postgres => {
            use sqlx::Connection;
            let base = base.map_or_else(postgres_base, String::from);
            let mut conn = sqlx::PgConnection::connect(&format!("{base}/postgres")).await.unwrap_or_else(|e| {
                panic!("PostgreSQL is not reachable at {base} ({e}): run the tests with ./scripts/test, which starts it")
            });
            sqlx::query(&format!("create database {name}"))
                .execute(&mut conn)
                .await
                .unwrap();
            format!("{base}/{name}")
        }
    }
}

/// A fixed clock: 2026-12-02T00:00:00Z, after November closed.
pub fn clock_at(ms: i64) -> Clock {
    Arc::new(move || ms)
}

pub const DEC_2_2026_MS: i64 = 1_796_169_600_000;

/// 2027-01-02T00:00:00Z: December 2026 has ended.
pub const JAN_2_2027_MS: i64 = DEC_2_2026_MS + 31 * 86_400_000;

/// One Prometheus recorder for the whole test process (a recorder is global).
pub fn metrics_handle() -> metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            metrics_exporter_prometheus::PrometheusBuilder::new()
                .install_recorder()
                .expect("install the metrics recorder")
        })
        .clone()
}

pub struct TestApp {
    pub state: AppState,
    pub app: axum::Router,
    pub url: String,
}

impl TestApp {
    pub async fn open(url: &str) -> TestApp {
        TestApp::open_with(url, billing_store::Topics::default()).await
    }

    /// A store writing its outputs to `topics` (tests sharing a broker use their own).
    /// A store that is `shard` of a deployment (issue 29), with its own commands topic.
    pub async fn open_shard(url: &str, shard: billing_store::shard::Shard) -> TestApp {
        TestApp::open_shard_with(url, shard, billing_store::Topics::default()).await
    }

    /// [`TestApp::open_shard`] writing to `topics`, the commands to the shard's own of them.
    pub async fn open_shard_with(
        url: &str,
        shard: billing_store::shard::Shard,
        topics: billing_store::Topics,
    ) -> TestApp {
        let topics = billing_store::Topics {
            commands: shard.own(&topics.commands),
            ..topics
        };
        TestApp::open_store(url, topics, Some(shard)).await
    }

    pub async fn open_with(url: &str, topics: billing_store::Topics) -> TestApp {
        TestApp::open_store(url, topics, None).await
    }

    async fn open_store(
        url: &str,
        topics: billing_store::Topics,
        shard: Option<billing_store::shard::Shard>,
    ) -> TestApp {
        // The fixtures are dated November 2026, and a replay folds usage no fold recorded
        // with its own clock (the wall clock in some tests): a century of dedupe horizon keeps
        // every test's events inside it whenever the suite runs (tests/storage.rs and
        // tests/kafka.rs test the horizon itself, with `with_dedupe_horizon`).
        let store = Store::open(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"))
            .with_topics(topics)
            .with_dedupe_horizon(CENTURY_S);
        let store = match shard {
            Some(s) => store.with_shard(s),
            None => store,
        };
        let state = AppState {
            store: Arc::new(store),
            admin_token_hash: hash_key(ADMIN),
            ingest_token_hash: Some(hash_key(INGEST)),
            clock: clock_at(DEC_2_2026_MS),
            sink: None,
            metrics: Some(metrics_handle()),
            limiter: Default::default(),
            usage_answers: Default::default(),
            webhook_policy: Default::default(),
            shards: None,
        };
        TestApp {
            app: router(state.clone()),
            state,
            url: url.to_string(),
        }
    }

    pub async fn fresh(db: Db) -> TestApp {
        TestApp::open(&fresh_db(db).await).await
    }

    /// The same app with its clock at `ms` (events may end up to a day after the clock,
    /// periods close once ended).
    pub fn at(mut self, ms: i64) -> TestApp {
        self.state.clock = clock_at(ms);
        self.app = router(self.state.clone());
        self
    }

    /// The same database with the store's dedupe horizon at `secs`.
    pub async fn with_dedupe_horizon(mut self, secs: i64) -> TestApp {
        let store = Store::open(&self.url)
            .await
            .unwrap()
            .with_topics(self.state.store.topics().clone())
            .with_dedupe_horizon(secs);
        self.state.store = Arc::new(store);
        self.app = router(self.state.clone());
        self
    }

    /// Closes the pool: "drop the app" as a crash or restart would.
    pub async fn shutdown(self) -> String {
        self.state.store.close().await;
        self.url
    }

    pub async fn call(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        ctype: &str,
        body: impl Into<Body>,
    ) -> (StatusCode, Value) {
        let (s, bytes) = self.raw(method, uri, token, ctype, body).await;
        let v = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (s, v)
    }

    pub async fn raw(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        ctype: &str,
        body: impl Into<Body>,
    ) -> (StatusCode, Vec<u8>) {
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", ctype);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let resp = self
            .app
            .clone()
            .oneshot(req.body(body.into()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        (
            status,
            resp.into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec(),
        )
    }

    /// A JSON request with the admin token.
    pub async fn admin(
        &self,
        method: &str,
        uri: &str,
        body: impl Into<Body>,
    ) -> (StatusCode, Value) {
        self.call(method, uri, Some(ADMIN), "application/json", body)
            .await
    }

    pub async fn get(&self, uri: &str, token: &str) -> (StatusCode, Value) {
        self.call("GET", uri, Some(token), "application/json", "")
            .await
    }

    /// Posts events as one batch with the admin token; asserts 200.
    pub async fn ingest(&self, events: &[String]) -> Value {
        let (s, v) = self
            .call(
                "POST",
                "/v1/events",
                Some(INGEST),
                "application/cloudevents-batch+json",
                format!("[{}]", events.join(",")),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    }

    pub async fn put_pricebook(&self, toml: &str) {
        let (s, v) = self
            .call(
                "PUT",
                "/v1/admin/pricebook",
                Some(ADMIN),
                "application/toml",
                toml.to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }

    /// Creates an account, returns its API key.
    pub async fn account(&self, id: &str) -> String {
        let (s, v) = self
            .call(
                "POST",
                "/v1/admin/accounts",
                Some(ADMIN),
                "application/json",
                format!("{{\"id\":\"{id}\"}}"),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v["api_key"].as_str().unwrap().to_string()
    }

    pub async fn close(&self, period: &str) -> Value {
        let (s, v) = self
            .call(
                "POST",
                &format!("/v1/admin/invoices/close?period={period}"),
                Some(ADMIN),
                "application/json",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    }
}

pub fn fixture(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `gpubill rate`'s invoices for the same inputs, as JSON values (section 6 shape).
pub fn offline_invoices(book: &str, events: &[String], period: &str) -> Vec<Value> {
    use billing_core::meter::Meter;
    let book = billing_core::pricebook::PriceBook::from_toml(book).unwrap();
    let mut meter = Meter::new();
    for e in events {
        meter.ingest(e.as_bytes());
    }
    // What `gpubill rate` does (rate_month: regions and account timezones included; for a
    // part-1 or part-2 book exactly `rate_all`).
    billing_core::rating::rate_month(&book, period, &meter, None)
        .unwrap()
        .rated
        .into_iter()
        .map(|r| serde_json::to_value(r.invoice).unwrap())
        .collect()
}

/// An issued invoice reduced to the section 6 fields (no id, number, status, issued_at).
pub fn section6(issued: &Value) -> Value {
    let mut v = issued.clone();
    let o = v.as_object_mut().unwrap();
    for k in [
        "kind",
        "id",
        "number",
        "status",
        "issued_at",
        "pricebook_version",
        "amount_due",
        "paid",
    ] {
        o.remove(k);
    }
    v
}

/// Every projection of a PostgreSQL store as text rows, table by table, in a stable order
/// (what a replay must reproduce, issue 30: byte for byte, dead letters with their numbers,
/// times and details, facts with their ingest times and fold stamps).
pub async fn projections(store: &Store) -> Vec<String> {
    let queries = [
        "select 'ledger|' || key_id || '|' || account || '|' || runs || '|' || coalesce(sources, '') from ledger_keys order by key_id",
        "select 'rental|' || kind || '|' || account || '|' || key || '|' || a || '|' || b || '|' || value || '|' || coalesce(ingested_ms, -1) || '|' || coalesce(stamp, -1) from rental_events order by kind, account, key, a, b, value",
        "select 'fact|' || account || '|' || lease || '|' || resource || '|' || sku || '|' || class || '|' || source || '|' || start_s || '|' || end_s || '|' || quantity || '|' || ingested_ms || '|' || coalesce(stamp, -1) from usage_facts order by account, lease, resource, sku, class, source, start_s, end_s, quantity, ingested_ms, stamp",
        "select 'event|' || encode(ident, 'hex') || '|' || encode(fingerprint, 'hex') || '|' || account || '|' || log_seq from events order by ident",
        "select 'egress|' || source || '|' || id || '|' || dest || '|' || time_s || '|' || bytes || '|' || coalesce(ingested_ms, -1) || '|' || coalesce(stamp, -1) from egress order by source, id",
        "select 'dead|' || seq || '|' || coalesce(log_seq, -1) || '|' || reason || '|' || detail || '|' || created_at_ms || '|' || coalesce(source, '') || '|' || coalesce(event_id, '') || '|' || encode(payload, 'hex') from dead_letters order by seq",
        "select 'pricebook|' || version || '|' || uploaded_at_ms || '|' || toml from pricebooks order by version",
        "select 'account|' || id || '|' || created_at_ms from accounts order by id",
        "select 'key|' || key_hash || '|' || account from api_keys order by key_hash",
        "select 'period|' || period || '|' || start_s || '|' || end_s || '|' || pricebook_version || '|' || closed_at_ms || '|' || coalesce(stamp, -1) from periods order by period",
        "select 'invoice|' || id || '|' || number || '|' || status || '|' || issued_at_ms || '|' || pricebook_version || '|' || credit || '|' || total || '|' || body || '|' || coalesce(amount_due, '') || '|' || coalesce(adjustments, '') || '|' || coalesce(credit_note, '') from invoices order by id",
        "select 'late|' || source || '|' || id || '|' || period || '|' || log_seq from late_usage order by source, id, period",
        "select 'decision|' || id || '|' || account || '|' || quota || '|' || period || '|' || kind from quota_decisions order by id",
        "select 'quotas|' || account || '|' || body || '|' || updated_at_ms from quotas order by account",
        "select 'offset|' || consumer || '|' || partition || '|' || next_offset from consumer_offsets order by consumer, partition",
        "select 'adjustment|' || account || '|' || period || '|' || closed_period || '|' || document_id || '|' || body from adjustments order by account, period, closed_period",
        "select 'credit_note|' || id || '|' || number || '|' || body from credit_notes order by id",
        "select 'movement|' || account || '|' || kind || '|' || amount || '|' || reference || '|' || at_ms from wallet_movements order by account, reference",
        "select 'payment|' || invoice_id || '|' || amount || '|' || method || '|' || reference || '|' || at_ms from invoice_payments order by invoice_id, reference",
        "select 'wallet|' || account || '|' || balance || '|' || outstanding from wallets order by account",
        "select 'series|' || series || '|' || year || '|' || last from number_series order by series, year",
        // Issue 28: notifications are facts of the ledger (their creation time aside).
        "select 'notify_settings|' || account || '|' || body || '|' || updated_at_ms from notify_settings order by account",
        "select 'notify_state|' || account || '|' || subject || '|' || body || '|' || coalesce(block, '') from notify_states order by account, subject",
        "select 'notification|' || account || '|' || seq || '|' || type || '|' || key || '|' || at_s || '|' || payload from notifications order by account, seq",
    ];
    let mut out = Vec::new();
    for q in queries {
        for r in billing_store::db::query(q)
            .fetch_all(store.pool())
            .await
            .unwrap()
        {
            out.push(r.get::<String, _>(0));
        }
    }
    out
}

/// splitmix64: seeded, deterministic decisions for generated workloads and simulations.
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True `p` times in a thousand.
    pub fn permille(&mut self, p: u64) -> bool {
        self.below(1000) < p
    }
}

/// Deterministic shuffle (splitmix64 Fisher-Yates).
pub fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut state = seed;
    for i in (1..v.len()).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        v.swap(i, ((z ^ (z >> 31)) % (i as u64 + 1)) as usize);
    }
}

// ---- Kafka (tansu on 127.0.0.1:9092, started by ./scripts/test) ------------------------------

/// Where the tests find the broker: `GPUBILL_TEST_KAFKA` (HOST:PORT), by default the tansu
/// ./scripts/test starts on 127.0.0.1:9092.
pub fn brokers() -> &'static str {
    static BROKERS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BROKERS.get_or_init(|| {
        std::env::var("GPUBILL_TEST_KAFKA")
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| "127.0.0.1:9092".to_string())
    })
}

/// A tansu broker of the test's own (memory storage, a free port), for tests that pause or
/// stop their broker: never the shared one. Killed (and reaped) when dropped.
pub struct OwnBroker {
    child: std::process::Child,
    pub addr: String,
}

impl OwnBroker {
    /// The tansu binary ./scripts/services.sh caches (`GPUBILL_TANSU` overrides its path).
    pub fn binary() -> std::path::PathBuf {
        if let Some(p) = std::env::var_os("GPUBILL_TANSU") {
            return p.into();
        }
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache"))
            })
            .expect("HOME or XDG_CACHE_HOME is set");
        cache.join("gpubill/tansu-0.6.0/tansu")
    }

    /// Starts tansu on a free port of 127.0.0.1 and waits (up to 30 s) until it answers.
    pub fn start() -> OwnBroker {
        let bin = Self::binary();
        assert!(
            bin.exists(),
            "no tansu at {}: run ./scripts/services.sh kafka, which fetches it",
            bin.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let url = format!("tcp://{addr}");
        let log = std::env::temp_dir().join(format!("gpubill-tansu-{port}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = std::process::Command::new(&bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let broker = OwnBroker { child, addr };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&broker.addr).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "tansu did not come up on {} (see {})",
                broker.addr,
                log.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        broker
    }

    /// SIGSTOP: the broker keeps its connections but answers nothing.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after `pause`.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, which: &str) {
        let status = std::process::Command::new("kill")
            .args([which, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {which} {}", self.child.id());
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        // A paused broker is killed as well (SIGKILL needs no SIGCONT).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn topic_with_partitions(partitions: i32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = format!("gpu.usage.test-{}-{nanos}", std::process::id());
    create_topic(&name, partitions).await;
    name
}

pub async fn create_topic(name: &str, partitions: i32) {
    create_topic_at(brokers(), name, partitions).await
}

/// Creates `name` with `partitions` at `brokers` (an existing one is fine).
pub async fn create_topic_at(brokers: &str, name: &str, partitions: i32) {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::config::ClientConfig;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .unwrap();
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    let results = admin
        .create_topics(&[NewTopic::new(name, partitions, TopicReplication::Fixed(1))], &options)
        .await
        .unwrap_or_else(|e| panic!("Kafka (tansu) is not reachable at {brokers} ({e}): run the tests with ./scripts/test, which starts it"));
    for r in results {
        match r {
            Ok(_) | Err((_, rdkafka::types::RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((t, e)) => panic!("create topic {t}: {e}"),
        }
    }
}

impl TestApp {
    /// The same app with its `POST /v1/events` handing records to `topic` at `brokers`
    /// (Kafka mode's usage sink), acknowledged within `timeout` or answered 503.
    pub fn with_usage_sink(self, brokers: &str, topic: &str, timeout: Duration) -> TestApp {
        let mut state = self.state.clone();
        state.sink = Some(std::sync::Arc::new(
            billing_kafka::UsageSink::new(brokers, topic, timeout).unwrap(),
        ));
        TestApp {
            app: billing_api::router(state.clone()),
            state,
            url: self.url.clone(),
        }
    }
}

/// `events` with every fourth redelivered, shuffled by `seed`, produced to `topic`'s 4
/// partitions keyed by subject as producers key them (a redelivery shares its first copy's
/// partition); answers how many records were produced.
pub async fn produce_redelivered_by_subject(topic: &str, events: &[String], seed: u64) -> i64 {
    let mut sent = events.to_vec();
    sent.extend(events.iter().step_by(4).cloned());
    shuffle(&mut sent, seed);
    let records: Vec<(i32, String)> = sent
        .into_iter()
        .map(|e| (subject_partition(&e), e))
        .collect();
    produce(topic, &records).await;
    records.len() as i64
}

/// The partition of 4 an event keyed by its subject goes to (the sum of its bytes mod 4).
pub fn subject_partition(event: &str) -> i32 {
    let v: Value = serde_json::from_str(event).unwrap();
    (v["subject"]
        .as_str()
        .unwrap()
        .bytes()
        .map(u32::from)
        .sum::<u32>()
        % 4) as i32
}

pub async fn produce(topic: &str, records: &[(i32, String)]) {
    let records: Vec<(i32, &str, Option<i64>)> = records
        .iter()
        .map(|(p, r)| (*p, r.as_str(), None))
        .collect();
    produce_records(topic, &records).await
}

/// Produces `(partition, payload, timestamp)` records with their Kafka timestamps (CreateTime)
/// as a node agent's clock would set them.
pub async fn produce_at(topic: &str, records: &[(i32, String, i64)]) {
    let records: Vec<(i32, &str, Option<i64>)> = records
        .iter()
        .map(|(p, r, at)| (*p, r.as_str(), Some(*at)))
        .collect();
    produce_records(topic, &records).await
}

/// Produces records one by one, each acknowledged before the next (their order is the
/// partition's), with the producer's own timestamp unless one is given.
async fn produce_records(topic: &str, records: &[(i32, &str, Option<i64>)]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("message.timeout.ms", "20000")
        .create()
        .unwrap();
    for (partition, payload, at_ms) in records {
        let mut record = FutureRecord::to(topic)
            .partition(*partition)
            .key("k")
            .payload(*payload);
        if let Some(at) = at_ms {
            record = record.timestamp(*at);
        }
        producer
            .send(record, Duration::from_secs(20))
            .await
            .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}"));
    }
}

/// Produces `(key, payload)` records keyed as node agents do (the partition follows the key),
/// pipelined: all sent, then every acknowledgement awaited.
pub async fn produce_keyed(topic: &str, records: &[(String, Vec<u8>)]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "20")
        .set("queue.buffering.max.messages", "1000000")
        .set("message.timeout.ms", "60000")
        .create()
        .unwrap();
    for chunk in records.chunks(20_000) {
        let mut acks = Vec::with_capacity(chunk.len());
        for (key, payload) in chunk {
            acks.push(
                producer
                    .send_result(FutureRecord::to(topic).key(key).payload(payload))
                    .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}")),
            );
        }
        for a in acks {
            a.await
                .unwrap()
                .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}"));
        }
    }
}

/// The sum of a topic's high watermarks. Beware: tansu 0.6.0 answers the base offset of a
/// partition's last record batch, not one past its last record, so this undercounts topics
/// written in multi-record batches (the records are all there and consumable).
pub fn high_watermarks(topic: &str, partitions: i32) -> i64 {
    use rdkafka::config::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .create()
        .unwrap();
    (0..partitions)
        .map(|p| {
            c.fetch_watermarks(topic, p, std::time::Duration::from_secs(10))
                .unwrap()
                .1
        })
        .sum()
}

/// One report of node `node` of account acme: 8 GPUs (one resource of 8 units) of
/// gpu.h100-80g for `[from, from + 10 s)`.
pub fn node_report(node: u32, from: i64) -> String {
    let t = |s: i64| billing_core::timestamp::format_secs(s);
    serde_json::json!({"specversion": "1.0", "id": format!("n{node}-{from}"), "source": format!("node/{node}"), "type": "gpu.usage",
        "subject": "acme", "data": {"lease": format!("L{node}"), "resource": "gpus", "sku": "gpu.h100-80g",
        "quantity": "8", "start": t(from), "end": t(from + 10)}})
    .to_string()
}

/// Asserts that `decisions` are a `warn` then a `limit` of a 1,000 GPU-hour quota (warning at
/// 80%), each taken with the batch that crossed its threshold: what each overshoots its
/// threshold by is at most `per_batch` GPU-hours (one batch of usage).
pub fn assert_crossed_within_a_batch(decisions: &[Value], per_batch: rust_decimal::Decimal) {
    use rust_decimal::Decimal;
    let used = |d: &Value| d["used"].as_str().unwrap().parse::<Decimal>().unwrap();
    for (d, threshold) in decisions
        .iter()
        .zip([Decimal::from(800), Decimal::from(1000)])
    {
        assert!(
            used(d) >= threshold && used(d) - threshold <= per_batch,
            "over {threshold} by more than {per_batch}: {d}"
        );
    }
    let kinds: Vec<&str> = decisions
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["warn", "limit"]);
}

/// Runs the consumer until the store holds `events` events (or fails after 90 s).
pub async fn consume_until(t: &TestApp, topic: &str, events: i64) {
    consume_until_offsets(t, topic, events, None).await
}

/// Like `consume_until`, and also until the stored positions add up to `records` (dead
/// letters and duplicates included).
pub async fn consume_until_offsets(t: &TestApp, topic: &str, events: i64, records: Option<i64>) {
    consume_at(t, topic, events, records, DEC_2_2026_MS).await
}

/// [`consume_until_offsets`] with the engine's clock at `now_ms`.
pub async fn consume_at(t: &TestApp, topic: &str, events: i64, records: Option<i64>, now_ms: i64) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let store = t.state.store.clone();
    let mut settings = billing_kafka::ConsumerSettings::new(brokers(), topic);
    // The test's own group: a member of a shared group that died elsewhere (a SIGKILLed
    // engine) would hold up every join until the broker expires it.
    settings.group = format!("{topic}-engine");
    settings.dead_letter_topic = Some(format!("{topic}.dlq"));
    let task = tokio::spawn(billing_kafka::run(store, settings, move || now_ms, stop_rx));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let stored = async || stored_positions(&t.state.store, topic).await;
    while t.state.store.log().event_count().await.unwrap() < events
        || records.is_some_and(|r| r > 0) && stored().await < records.unwrap_or(0)
    {
        assert!(!task.is_finished(), "consumer stopped: {:?}", task.await);
        assert!(
            std::time::Instant::now() < deadline,
            "consumer did not fold {events} events in 90 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    stop_tx.send(true).unwrap();
    task.await.unwrap().unwrap();
}

/// The store's positions of `topic` added up (its partitions below 16): how many of its
/// records the store has folded or passed.
pub async fn stored_positions(store: &Store, topic: &str) -> i64 {
    let mut sum = 0;
    for p in 0..16 {
        sum += store
            .log()
            .stored_offset(topic, p)
            .await
            .unwrap()
            .unwrap_or(0);
    }
    sum
}

/// Relays the outbox to the broker until it is empty (fails after 60 s).
pub async fn relay_all(t: &TestApp) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let relay = tokio::spawn(billing_kafka::relay(
        t.state.store.clone(),
        brokers(),
        || DEC_2_2026_MS,
        stop_rx,
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !t
        .state
        .store
        .log()
        .outbox_pending(1)
        .await
        .unwrap()
        .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "outbox not relayed in 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    stop_tx.send(true).unwrap();
    relay.await.unwrap().unwrap();
}

/// A 4-partition usage topic and its own commands, invoices and dead-letter topics: what a
/// replay test runs an engine and `gpubill replay` against.
pub async fn replayable_topics() -> (String, billing_store::Topics) {
    let topic = topic_with_partitions(4).await;
    let topics = billing_store::Topics {
        commands: format!("{topic}.commands"),
        invoices: format!("{topic}.invoices"),
        ..Default::default()
    };
    for t in [&topics.commands, &topics.invoices, &format!("{topic}.dlq")] {
        create_topic(t, 1).await;
    }
    (topic, topics)
}

/// A small deterministic generator (xorshift), so a failure names its seed.
pub struct Gen(pub u64);

impl Gen {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An instant as RFC 3339 in UTC with whole seconds (the core's own format).
pub fn rfc(secs: i64) -> String {
    billing_core::timestamp::format_secs(secs)
}

/// How many of `out` were accepted; panics naming every rejection (a test workload is valid).
pub fn accepted_all(out: &[billing_store::Outcome]) -> usize {
    use billing_store::Outcome;
    let rejected: Vec<String> = out
        .iter()
        .filter_map(|o| match o {
            Outcome::Rejected { reason, detail } => Some(format!("{reason}: {detail}")),
            _ => None,
        })
        .collect();
    assert!(rejected.is_empty(), "{rejected:?}");
    out.iter()
        .filter(|o| matches!(o, Outcome::Accepted))
        .count()
}

/// Ingests `delivered` into a fresh database of `db` with price book `book`, in batches of
/// `batch`, reopening the store half way (a restart mid-ingest); answers the store and how
/// many records were accepted.
pub async fn ingest_with_restart(
    db: Db,
    book: &str,
    delivered: &[String],
    batch: usize,
) -> (Store, usize) {
    let url = fresh_db(db).await;
    let half = delivered.len() / 2;
    let mut count = 0;
    {
        let store = Store::open(&url)
            .await
            .unwrap()
            .with_dedupe_horizon(CENTURY_S);
        store
            .admin()
            .put_pricebook(book, DEC_2_2026_MS)
            .await
            .unwrap();
        for chunk in delivered[..half].chunks(batch) {
            let records = chunk.iter().map(|e| e.as_bytes().to_vec()).collect();
            count += accepted_all(&store.log().ingest(records, DEC_2_2026_MS).await.unwrap());
        }
        store.close().await;
    }
    // The engine restarts: a new store on the same database goes on where it stopped.
    let store = Store::open(&url)
        .await
        .unwrap()
        .with_dedupe_horizon(CENTURY_S);
    for chunk in delivered[half..].chunks(batch) {
        let records = chunk.iter().map(|e| e.as_bytes().to_vec()).collect();
        count += accepted_all(&store.log().ingest(records, DEC_2_2026_MS).await.unwrap());
    }
    (store, count)
}
