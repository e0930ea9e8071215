//! Issue 10 in the engine: the rental events of billing-semantics part 2 (lease states, spot
//! price curves, node faults, interface counters) and the price book's part-2 terms (state
//! rates, SLA, packages, subscriptions, expiring credits) go through the same ingest as usage
//! and close to exactly the invoices `gpubill rate` issues for the same inputs, shuffled and
//! redelivered, on SQLite and PostgreSQL.

use billing_store::{Outcome, Store};
use gpubill_tests::*;
use serde_json::Value;

/// 2026-11-01T00:00:00Z.
const NOV_1: i64 = 1_793_491_200;
const WINDOW: i64 = 30 * 86_400;

const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
spot_rate_per_hour = "9.60"
minimum_seconds = 600
tiers = [ { up_to_hours = 30, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
state_rates = { stopped = "0", host_down = "0" }

[skus."storage.ssd"]
rate_per_hour = "0.001"
state_rates = { stopped = "0.0005", provisioning = "0" }

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
tiers = [ { up_to_gb = 5, rate_per_gb = "0.00" }, { rate_per_gb = "0.50" } ]

[tax]
rate = "0.06"

[sla]
compensation_multiplier = "5"
attach_seconds = 600

[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "1"
from = "2026-11-03T00:00:00Z"
to = "2026-11-10T00:00:00Z"
rate_per_hour = "15.00"

[[packages]]
account = "acme"
id = "pk-1"
sku = "gpu.h100"
hours = "40"
from = "2026-11-05T00:00:00Z"
to = "2026-11-25T00:00:00Z"
price = "500.00"

[[packages]]
account = "beta"
id = "trial"
sku = "gpu.h100"
hours = "3"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "0"

[[subscriptions]]
account = "beta"
id = "sub-w"
sku = "gpu.h100"
quantity = "1"
cycle = "week"
start = "2026-11-08T00:00:00Z"
cycles = 2
price = "1000.00"

[[credits]]
account = "acme"
id = "voucher-nov"
amount = "200.00"
to = "2026-11-20T00:00:00Z"

[[credits]]
account = "beta"
id = "voucher-dec"
amount = "70.00"
from = "2026-12-01T00:00:00Z"

[[credits]]
account = "gamma"
amount = "30.00"
"#;

const ACCOUNTS: [&str; 3] = ["acme", "beta", "gamma"];
const STATES: [&str; 6] = [
    "provisioning",
    "running",
    "stopped",
    "host_down",
    "preempted",
    "terminated",
];

/// `n` events of every type over November 2026 (usage from three nodes, egress, lease
/// states, spot prices, node faults, counters with resets).
fn workload(seed: u64, n: usize) -> Vec<String> {
    let mut g = Gen(seed | 1);
    let mut out = Vec::new();
    let mut counters = [[0u64; 2]; 3];
    for i in 0..n {
        let id = format!("e{seed}-{i}");
        let at = NOV_1 + g.below(WINDOW as u64) as i64;
        let account = ACCOUNTS[g.below(3) as usize];
        let lease = format!("L{}", g.below(2));
        let r = match g.below(10) {
            0..=3 => {
                let sku = ["gpu.h100", "storage.ssd"][g.below(2) as usize];
                let class = if sku == "gpu.h100" && g.below(4) == 0 {
                    "spot"
                } else {
                    "on_demand"
                };
                let quantity = if sku == "storage.ssd" { "500" } else { "1" };
                let len = 60 + g.below(3 * 3600) as i64;
                serde_json::json!({"specversion":"1.0","id":id,"source":format!("node/{}", g.below(3)),
                    "type":"gpu.usage","subject":account,
                    "data":{"lease":lease,"resource":format!("r{}", g.below(2)),"sku":sku,"class":class,
                            "start":rfc(at),"end":rfc((at + len).min(NOV_1 + WINDOW)),"quantity":quantity}})
            }
            4 => {
                serde_json::json!({"specversion":"1.0","id":id,"source":"gw/1","type":"net.egress",
                "subject":account,"time":rfc(at),
                "data":{"dest":"internet","bytes":g.below(4_000_000_000)}})
            }
            5 | 6 => {
                serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.state",
                "subject":account,"data":{"lease":lease,"state":STATES[g.below(6) as usize],"at":rfc(at)}})
            }
            7 => {
                let price = ["3.20", "4.00", "8.00", "9.6"][g.below(4) as usize];
                serde_json::json!({"specversion":"1.0","id":id,"source":"market/gz","type":"spot.price",
                    "subject":"gz-a","data":{"sku":"gpu.h100","price_per_hour":price,"from":rfc(at)}})
            }
            8 => {
                serde_json::json!({"specversion":"1.0","id":id,"source":"mon/gz","type":"node.fault",
                "subject":"platform","data":{"node":format!("node/{}", g.below(3)),
                "start":rfc(at),"end":rfc(at + 60 + g.below(7200) as i64)}})
            }
            _ => {
                let a = g.below(3) as usize;
                let l = g.below(2) as usize;
                // Counters mostly grow and sometimes reset (a reboot).
                counters[a][l] = if g.below(5) == 0 {
                    g.below(1000)
                } else {
                    counters[a][l] + g.below(3_000_000_000)
                };
                serde_json::json!({"specversion":"1.0","id":id,"source":"gw/1","type":"net.counter",
                    "subject":ACCOUNTS[a],"data":{"lease":format!("L{l}"),"interface":"eth0","dest":"internet",
                    "bytes_total":counters[a][l],"at":rfc(at)}})
            }
        };
        out.push(r.to_string());
    }
    out
}

fn statuses(out: &[Outcome]) -> (usize, usize, Vec<String>) {
    let (mut accepted, mut duplicates, mut rejected) = (0, 0, Vec::new());
    for o in out {
        match o {
            Outcome::Accepted => accepted += 1,
            Outcome::Duplicate => duplicates += 1,
            Outcome::Rejected { reason, detail } => rejected.push(format!("{reason}: {detail}")),
        }
    }
    (accepted, duplicates, rejected)
}

/// Shuffled, 20% redelivered, in batches of 97: the engine's close equals `gpubill rate`.
async fn rental_events_close_to_the_offline_invoices(db: Db) {
    for seed in [7u64, 1234, 99991] {
        let events = workload(seed, 600);
        let store = Store::open(&fresh_db(db).await)
            .await
            .unwrap()
            .with_dedupe_horizon(CENTURY_S);
        store
            .admin()
            .put_pricebook(BOOK, DEC_2_2026_MS)
            .await
            .unwrap();
        let mut delivered = events.clone();
        delivered.extend(events.iter().step_by(5).cloned());
        shuffle(&mut delivered, seed);
        let mut accepted = 0;
        for chunk in delivered.chunks(97) {
            let records = chunk.iter().map(|e| e.as_bytes().to_vec()).collect();
            let out = store.log().ingest(records, DEC_2_2026_MS).await.unwrap();
            let (a, _, rejected) = statuses(&out);
            assert!(rejected.is_empty(), "seed {seed}: {rejected:?}");
            accepted += a;
        }
        assert_eq!(accepted, events.len(), "seed {seed}");
        let issued = store
            .finance()
            .close_period("2026-11", DEC_2_2026_MS)
            .await
            .unwrap();
        let engine: Vec<Value> = issued
            .iter()
            .map(|i| section6(&serde_json::to_value(&i.invoice).unwrap()))
            .collect();
        let offline = offline_invoices(BOOK, &events, "2026-11");
        assert_eq!(engine.len(), offline.len(), "seed {seed}");
        for (e, o) in engine.iter().zip(&offline) {
            assert_eq!(
                e, o,
                "seed {seed}: engine invoice differs from gpubill rate"
            );
        }
        // The workload exercises what it is meant to.
        let text = serde_json::to_string(&offline).unwrap();
        for component in [
            "state:",
            "package",
            "subscription",
            "sla_compensation",
            "egress",
        ] {
            assert!(text.contains(component), "seed {seed}: no {component} line");
        }
    }
}
on_both!(rental_events_close_to_the_offline_invoices);

/// A lease's state point that arrives after its period closed is listed for adjustment and
/// changes no issued invoice; a platform event is stored once for every account.
async fn late_rental_events_are_pending_adjustments(db: Db) {
    let store = Store::open(&fresh_db(db).await)
        .await
        .unwrap()
        .with_dedupe_horizon(CENTURY_S);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let usage =
        serde_json::json!({"specversion":"1.0","id":"u1","source":"node/1","type":"gpu.usage",
        "subject":"gamma","data":{"lease":"L1","resource":"v","sku":"storage.ssd","quantity":"500",
        "start":"2026-11-03T00:00:00Z","end":"2026-11-04T00:00:00Z"}})
        .to_string();
    let out = store
        .log()
        .ingest(vec![usage.into_bytes()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert!(matches!(out[0], Outcome::Accepted), "{out:?}");
    let issued = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let gamma = issued
        .iter()
        .find(|i| i.invoice.account == "gamma")
        .unwrap();
    let before = serde_json::to_string(&gamma.invoice).unwrap();
    // 500 GB for 24 h at 0.001 per GB-hour, 8 h of it off-peak at 0.70: 2.80 + 8.00.
    assert_eq!(gamma.invoice.subtotal.to_string(), "10.80", "{before}");
    let stopped =
        serde_json::json!({"specversion":"1.0","id":"s1","source":"ctl/1","type":"lease.state",
        "subject":"gamma","data":{"lease":"L1","state":"stopped","at":"2026-11-03T12:00:00Z"}})
        .to_string();
    let out = store
        .log()
        .ingest(vec![stopped.into_bytes()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert!(matches!(out[0], Outcome::Accepted));
    let late = store.log().late_usage(Some("2026-11")).await.unwrap();
    assert_eq!(late.len(), 1, "{late:?}");
    // A platform event in the closed period may change any of its invoices: noted for each.
    let price = serde_json::json!({"specversion":"1.0","id":"p1","source":"market/gz","type":"spot.price",
        "subject":"gz-a","data":{"sku":"gpu.h100","price_per_hour":"4.00","from":"2026-11-20T00:00:00Z"}})
    .to_string();
    let out = store
        .log()
        .ingest(vec![price.into_bytes()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert!(matches!(out[0], Outcome::Accepted));
    let late = store.log().late_usage(Some("2026-11")).await.unwrap();
    assert_eq!(late.len(), 1 + issued.len(), "{late:?}");
    assert_eq!(late.iter().filter(|l| l.id == "p1").count(), issued.len());
    let after = store
        .finance()
        .invoices(Some("gamma"), Some("2026-11"))
        .await
        .unwrap();
    assert_eq!(serde_json::to_string(&after[0].invoice).unwrap(), before);
}
on_both!(late_rental_events_are_pending_adjustments);

/// Through Kafka (tansu) into PostgreSQL: a part-2 workload keyed by subject over 4
/// partitions, shuffled and redelivered, closes to the `gpubill rate` invoices; `gpubill
/// replay` into an empty database rebuilds every projection (rental facts and coverage by
/// source included) and the same invoices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rental_events_through_kafka_bill_like_gpubill_rate_and_replay_identically() {
    let (topic, topics) = replayable_topics().await;
    let events = workload(4242, 400);
    let produced = produce_redelivered_by_subject(&topic, &events, 4242).await;

    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(BOOK).await;
    consume_until_offsets(&a, &topic, events.len() as i64, Some(produced)).await;
    let closed = a.close("2026-11").await;
    let issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    assert_eq!(issued, offline_invoices(BOOK, &events, "2026-11"));
    assert!(
        a.state
            .store
            .log()
            .dead_letters(0, 10)
            .await
            .unwrap()
            .is_empty()
    );

    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    // The commands topic holds what the original run decided (price book, close).
    relay_all(&a).await;
    billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), &topic, &topics.commands),
        || DEC_2_2026_MS + 60_000,
    )
    .await
    .unwrap();
    let (original, replayed) = (
        projections(&a.state.store).await,
        projections(&b.state.store).await,
    );
    assert!(original.iter().any(|r| r.starts_with("rental|spot.price")));
    assert!(original.iter().any(|r| r.starts_with("rental|lease.state")));
    assert_eq!(original, replayed);
}

/// What the engine measures of an open period counts part 2: usage a package covers costs
/// nothing more, and a stopped lease's volume costs its stopped rate (`/v1/cost/current`, the
/// figure quotas and authorizations read).
async fn the_current_cost_counts_packages_and_stopped_rates(db: Db) {
    const PK_BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "3.00"

[skus."storage.ssd"]
rate_per_hour = "0.001"
state_rates = { stopped = "0.0005" }

[[packages]]
account = "pk"
id = "hours-10"
sku = "gpu.h100"
hours = "10"
from = "2026-12-01T00:00:00Z"
to = "2027-01-01T00:00:00Z"
price = "0"
"#;
    let t = TestApp::fresh(db).await;
    t.put_pricebook(PK_BOOK).await;
    let key = t.account("pk").await;
    let ev = |id: &str, ty: &str, data: Value| {
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":ty,"subject":"pk","data":data})
            .to_string()
    };
    let v = t
        .ingest(&[
            ev("u1", "gpu.usage", serde_json::json!({"lease":"L1","resource":"g0","sku":"gpu.h100",
                "start":"2026-12-01T00:00:00Z","end":"2026-12-01T02:00:00Z"})),
            ev("s1", "lease.state", serde_json::json!({"lease":"L2","state":"stopped","at":"2026-12-01T00:00:00Z"})),
            ev("u2", "gpu.usage", serde_json::json!({"lease":"L2","resource":"vol","sku":"storage.ssd","quantity":"500",
                "start":"2026-12-01T00:00:00Z","end":"2026-12-01T10:00:00Z"})),
        ])
        .await;
    assert_eq!(v["accepted"], 3, "{v}");
    let (s, cost) = t.get("/v1/cost/current", &key).await;
    assert_eq!(s, axum::http::StatusCode::OK, "{cost}");
    // 2 GPU-hours from the package (0.00); 500 GB x 10 h stopped at 0.0005 = 2.50 (running
    // it would be 5.00).
    assert_eq!(cost["invoice"]["total"], "2.50", "{cost}");
    let lines = cost["invoice"]["lines"].to_string();
    assert!(
        lines.contains("package_usage") && lines.contains("state:stopped"),
        "{lines}"
    );
}
on_both!(the_current_cost_counts_packages_and_stopped_rates);

/// Bad rental events are dead-lettered with their reason through the engine, and nothing
/// stored changes.
async fn bad_rental_events_are_dead_lettered_with_their_reason(db: Db) {
    let store = Store::open(&fresh_db(db).await)
        .await
        .unwrap()
        .with_dedupe_horizon(CENTURY_S);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let ev = |id: &str, ty: &str, subject: &str, data: Value| {
        serde_json::json!({"specversion":"1.0","id":id,"source":"x/1","type":ty,"subject":subject,"data":data})
            .to_string()
            .into_bytes()
    };
    let bad = vec![
        ev(
            "b1",
            "lease.state",
            "acme",
            serde_json::json!({"lease":"L1","state":"sleeping","at":"2026-11-03T00:00:00Z"}),
        ),
        ev(
            "b2",
            "net.counter",
            "acme",
            serde_json::json!({"lease":"L1","interface":"eth0","dest":"internet","bytes_total":-5,"at":"2026-11-03T00:00:00Z"}),
        ),
        ev(
            "b3",
            "node.fault",
            "platform",
            serde_json::json!({"node":"node/1","start":"2026-11-03T01:00:00Z","end":"2026-11-03T01:00:00Z"}),
        ),
        ev(
            "b4",
            "spot.price",
            "gz-a",
            serde_json::json!({"sku":"gpu.h100","price_per_hour":"-1","from":"2026-11-03T00:00:00Z"}),
        ),
        ev(
            "b5",
            "spot.price",
            "gz-a",
            serde_json::json!({"sku":"gpu.h100","price_per_hour":"4.00"}),
        ),
    ];
    let out = store.log().ingest(bad, DEC_2_2026_MS).await.unwrap();
    let reasons: Vec<String> = out
        .iter()
        .map(|o| match o {
            Outcome::Rejected { reason, .. } => reason.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "bad_state",
            "bad_bytes",
            "empty_interval",
            "bad_price",
            "missing_field"
        ]
    );
    let dead = store.log().dead_letters(0, 10).await.unwrap();
    assert_eq!(dead.len(), 5);
    assert_eq!(
        store.log().event_count().await.unwrap(),
        0,
        "no identity stored"
    );
    assert!(store.log().platform().await.unwrap().curves().is_empty());
    assert!(
        store
            .log()
            .account_ledger("acme")
            .await
            .unwrap()
            .leases()
            .is_empty()
    );
}
on_both!(bad_rental_events_are_dead_lettered_with_their_reason);
