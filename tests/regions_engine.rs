//! Issue 26, section 19 in the engine: regions with their own currency, timezone, skus,
//! off-peak, egress and tax, an account timezone unlike any region's, usage, egress, counters
//! and spot prices naming a region, lease states at home applying in every region, and terms
//! in a region. Each (account, region) is a billing domain of its own: the close issues one
//! invoice per domain, equal to `gpubill rate`'s (`rating::rate_month`) for the same events
//! shuffled and redelivered, on SQLite and PostgreSQL; the customer lists its regions'
//! invoices with its own; wallets hold one currency each (a USD top-up never lands in a CNY
//! wallet, a region's invoice is settled from the region's wallet).

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::Value;

/// 2026-11-01T00:00:00+08:00 (home's timezone is Asia/Shanghai).
const NOV_1: i64 = 1_793_462_400;
const WINDOW: i64 = 30 * 86_400;

const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"
increment_seconds = 3600
spot_rate_per_hour = "9.60"
state_rates = { stopped = "0" }

[skus."gpu.a100"]
tiers = [ { up_to_hours = 20, rate_per_hour = "12.00" }, { rate_per_hour = "10.00" } ]

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
rate_per_gb = "0.10"

[tax]
rate = "0.06"

[regions."us-west"]
currency = "USD"
timezone = "America/Los_Angeles"
[regions."us-west".skus."gpu.h100"]
rate_per_hour = "3.20"
increment_seconds = 60
spot_rate_per_hour = "1.00"
[regions."us-west".skus."gpu.a100"]
rate_per_hour = "1.50"
[[regions."us-west".offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.80"
[regions."us-west".egress.internet]
rate_per_gb = "0.02"
[regions."us-west".tax]
rate = "0.0725"

[regions."eu-frankfurt"]
currency = "EUR"
timezone = "Europe/Berlin"
[regions."eu-frankfurt".skus."gpu.a100"]
rate_per_hour = "1.80"
[regions."eu-frankfurt".egress.internet]
rate_per_gb = "0.05"

# An account timezone unlike every region's: its invoices' periods are UTC months.
[[accounts]]
id = "acme"
timezone = "UTC"

[[discounts]]
account = "acme"
percent = "5"

[[reservations]]
account = "acme"
region = "us-west"
sku = "gpu.h100"
quantity = "1"
from = "2026-10-01T00:00:00-07:00"
to = "2027-01-01T00:00:00-08:00"
rate_per_hour = "2.00"

[[credits]]
account = "beta"
region = "us-west"
id = "welcome-usd"
amount = "25.00"

[[charges]]
account = "beta"
region = "eu-frankfurt"
id = "migration"
description = "data migration"
amount = "120.00"
at = "2026-11-20T12:00:00+01:00"
"#;

const ACCOUNTS: [&str; 3] = ["acme", "beta", "gamma"];
const REGIONS: [Option<&str>; 3] = [None, Some("us-west"), Some("eu-frankfurt")];

fn with_region(mut data: Value, region: Option<&str>) -> Value {
    if let Some(r) = region {
        data["region"] = Value::String(r.to_string());
    }
    data
}

/// `n` events around November 2026 in three domains: usage of two skus (on-demand and spot),
/// egress, counters, spot prices per region, and lease states (home only: they apply in every
/// region).
fn workload(seed: u64, n: usize) -> Vec<String> {
    let mut g = Gen(seed | 1);
    let mut counters = [0u64; 9];
    let mut out = Vec::new();
    for i in 0..n {
        let id = format!("r{seed}-{i}");
        let a = g.below(3) as usize;
        let r = g.below(3) as usize;
        let (account, region) = (ACCOUNTS[a], REGIONS[r]);
        // A day either side of November: timezones decide which month a second is in.
        let at = NOV_1 - 86_400 + g.below((WINDOW + 2 * 86_400) as u64) as i64;
        let e = match g.below(10) {
            0..=5 => {
                // eu-frankfurt prices only the A100, on demand; the H100 has spot rates.
                let h100 = r != 2 && g.below(2) == 0;
                let sku = if h100 { "gpu.h100" } else { "gpu.a100" };
                let class = if h100 && g.below(4) == 0 {
                    "spot"
                } else {
                    "on_demand"
                };
                let len = 1 + g.below(3 * 3600) as i64;
                let data = serde_json::json!({"lease":"L1","resource":format!("g{}", g.below(2)),
                    "sku":sku,"class":class,"start":rfc(at),"end":rfc(at + len)});
                serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
                    "subject":account,"data":with_region(data, region)})
            }
            6 => {
                let data = serde_json::json!({"dest":"internet","bytes":g.below(3_000_000_000)});
                serde_json::json!({"specversion":"1.0","id":id,"source":"gw/1","type":"net.egress",
                    "subject":account,"time":rfc(at),"data":with_region(data, region)})
            }
            7 => {
                counters[a * 3 + r] += g.below(2_000_000_000);
                let data = serde_json::json!({"lease":"L1","interface":"eth0","dest":"internet",
                    "bytes_total":counters[a * 3 + r],"at":rfc(at)});
                serde_json::json!({"specversion":"1.0","id":id,"source":"gw/2","type":"net.counter",
                    "subject":account,"data":with_region(data, region)})
            }
            8 => {
                let price = format!("{}.{:02}", 1 + g.below(3), g.below(100));
                let data =
                    serde_json::json!({"sku":"gpu.h100","price_per_hour":price,"from":rfc(at)});
                serde_json::json!({"specversion":"1.0","id":id,"source":"market/1","type":"spot.price",
                    "subject":"platform","data":with_region(data, region)})
            }
            _ => {
                let state = ["running", "stopped"][g.below(2) as usize];
                serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.state",
                    "subject":account,"data":{"lease":"L1","state":state,"at":rfc(at)}})
            }
        };
        out.push(e.to_string());
    }
    out
}

fn rate_offline(events: &[String]) -> Vec<Value> {
    let book = billing_core::pricebook::PriceBook::from_toml(BOOK).unwrap();
    let mut meter = billing_core::meter::Meter::new();
    for e in events {
        meter.ingest(e.as_bytes());
    }
    let month = billing_core::rating::rate_month(&book, "2026-11", &meter, None).unwrap();
    assert!(month.unpriced.is_empty(), "{:?}", month.unpriced);
    month
        .rated
        .into_iter()
        .map(|r| serde_json::to_value(r.invoice).unwrap())
        .collect()
}

/// The engine's invoices of a close, as section 6 shows them, sorted as `gpubill rate` sorts
/// (account, then region: home first).
fn sorted_section6(issued: &[billing_store::IssuedInvoice]) -> Vec<Value> {
    let mut v: Vec<Value> = issued
        .iter()
        .map(|i| section6(&serde_json::to_value(&i.invoice).unwrap()))
        .collect();
    sort_by_domain(&mut v);
    v
}

/// Invoices in `gpubill rate`'s order: account, then region (home first).
fn sort_by_domain(invoices: &mut [Value]) {
    invoices.sort_by_key(|i| {
        (
            i["account"].as_str().unwrap_or_default().to_string(),
            i["region"].as_str().map(str::to_string),
        )
    });
}

/// Three accounts in three domains each, shuffled, 20% redelivered, in batches of 61, the
/// engine reopened half way: the close issues one invoice per (account, region) in the
/// region's currency over the account's (UTC for acme) or the region's month, exactly
/// `gpubill rate`'s.
async fn regions_close_to_the_offline_invoices(db: Db) {
    for seed in [7u64, 991] {
        let events = workload(seed, 600);
        let mut delivered = events.clone();
        delivered.extend(events.iter().step_by(5).cloned());
        shuffle(&mut delivered, seed);
        let (store, count) = ingest_with_restart(db, BOOK, &delivered, 61).await;
        assert_eq!(count, events.len(), "seed {seed}");
        let issued = store
            .finance()
            .close_period("2026-11", DEC_2_2026_MS)
            .await
            .unwrap();
        let engine = sorted_section6(&issued);
        let offline = rate_offline(&events);
        assert_eq!(
            engine.len(),
            offline.len(),
            "seed {seed}: {engine:#?}\n{offline:#?}"
        );
        for (e, o) in engine.iter().zip(&offline) {
            assert_eq!(
                e, o,
                "seed {seed}: engine invoice differs from gpubill rate"
            );
        }
        // Every domain is there, each in its currency; acme's periods are UTC months.
        let currencies: std::collections::BTreeSet<(String, String)> = engine
            .iter()
            .map(|i| {
                (
                    i["region"].as_str().unwrap_or("home").to_string(),
                    i["currency"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            currencies,
            [("eu-frankfurt", "EUR"), ("home", "CNY"), ("us-west", "USD")]
                .map(|(r, c)| (r.to_string(), c.to_string()))
                .into_iter()
                .collect(),
            "seed {seed}"
        );
        let acme = engine
            .iter()
            .find(|i| i["account"] == "acme" && i["region"] == "us-west")
            .unwrap();
        assert_eq!(acme["period"]["start"], "2026-11-01T00:00:00Z", "{acme}");
        let beta = engine
            .iter()
            .find(|i| i["account"] == "beta" && i["region"] == "us-west")
            .unwrap();
        assert_eq!(beta["period"]["start"], "2026-11-01T07:00:00Z", "{beta}");
        // A close again answers the same invoices; verify finds nothing to report.
        let again = store
            .finance()
            .close_period("2026-11", DEC_2_2026_MS)
            .await
            .unwrap();
        assert_eq!(sorted_section6(&again), engine, "seed {seed}");
    }
}
on_both!(regions_close_to_the_offline_invoices);

const SMALL_BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100"]
rate_per_hour = "24.00"
[regions."us-west"]
currency = "USD"
timezone = "America/Los_Angeles"
[regions."us-west".skus."gpu.h100"]
rate_per_hour = "3.20"
"#;

/// Section 19 with wallets: acme rents 10 h at home (240.00 CNY) and 10 h in us-west (32.00
/// USD). Its customer key lists both invoices. A top-up naming USD for the home wallet is
/// refused naming both currencies; a top-up of 50 USD to the us-west wallet pays the USD
/// invoice (32.00) and leaves 18.00 there, while the CNY invoice stays unpaid.
async fn a_region_is_invoiced_and_settled_in_its_own_currency(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(SMALL_BOOK).await;
    let key = t.account("acme").await;
    let usage = |id: &str, region: Option<&str>| {
        let data = serde_json::json!({"lease":"L1","resource":"g0","sku":"gpu.h100",
            "start":"2026-11-10T00:00:00Z","end":"2026-11-10T10:00:00Z"});
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
            "subject":"acme","data":with_region(data, region)})
        .to_string()
    };
    t.ingest(&[usage("h", None), usage("u", Some("us-west"))])
        .await;
    t.close("2026-11").await;
    let (s, list) = t.get("/v1/invoices", &key).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let invoices = list["invoices"].as_array().or(list.as_array()).unwrap();
    let totals: Vec<(Value, Value, Value)> = invoices
        .iter()
        .map(|i| {
            let inv = if i["invoice"].is_object() {
                &i["invoice"]
            } else {
                i
            };
            (
                inv["region"].clone(),
                inv["currency"].clone(),
                inv["total"].clone(),
            )
        })
        .collect();
    assert!(
        totals.contains(&(Value::Null, "CNY".into(), "240.00".into())),
        "{list}"
    );
    assert!(
        totals.contains(&("us-west".into(), "USD".into(), "32.00".into())),
        "{list}"
    );

    let t = &t;
    let topup = |body: Value| async move {
        t.admin("POST", "/v1/admin/accounts/acme/topups", body.to_string())
            .await
    };
    let (s, v) =
        topup(serde_json::json!({"amount":"50.00","reference":"t1","currency":"USD"})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let msg = v.to_string();
    assert!(msg.contains("USD") && msg.contains("CNY"), "{msg}");
    let (s, v) =
        topup(serde_json::json!({"amount":"50.00","reference":"t1","region":"mars"})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v.to_string().contains("mars"), "{v}");
    let (s, v) = topup(
        serde_json::json!({"amount":"50.00","reference":"t2","region":"us-west","currency":"USD"}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["currency"], "USD", "{v}");
    assert_eq!(v["balance"], "18.00", "{v}");
    assert_eq!(v["settled"].as_array().map(Vec::len), Some(1), "{v}");
    let home = t.state.store.finance().wallet("acme").await.unwrap();
    assert_eq!(home.balance.to_string(), "0.00");
}
on_both!(a_region_is_invoiced_and_settled_in_its_own_currency);

/// Through Kafka (tansu): the regional workload keyed by subject, consumed into PostgreSQL,
/// closes to `gpubill rate`'s invoices; a replay of the usage topic and the commands topic
/// into an empty database rebuilds every table byte for byte (regional ledgers, invoices,
/// numbers); a late event in us-west after the close is a pending adjustment of that
/// region's invoice, whose recomputation is what `gpubill rate` says with it; `verify`
/// finds nothing to report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regions_through_kafka_bill_like_gpubill_rate_and_replay_identically() {
    let (topic, topics) = replayable_topics().await;
    let events = workload(31, 400);
    let mut sent = events.clone();
    sent.extend(events.iter().step_by(4).cloned());
    shuffle(&mut sent, 31);
    let partition = |e: &str| {
        let v: Value = serde_json::from_str(e).unwrap();
        (v["subject"]
            .as_str()
            .unwrap()
            .bytes()
            .map(u32::from)
            .sum::<u32>()
            % 4) as i32
    };
    let records: Vec<(i32, String)> = sent.into_iter().map(|e| (partition(&e), e)).collect();
    produce(&topic, &records).await;

    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(BOOK).await;
    consume_until_offsets(&a, &topic, events.len() as i64, Some(records.len() as i64)).await;
    let closed = a.close("2026-11").await;
    let mut issued: Vec<Value> = closed.as_array().unwrap().iter().map(section6).collect();
    sort_by_domain(&mut issued);
    assert_eq!(issued, rate_offline(&events));

    // A late usage event in us-west, after the close.
    let late =
        serde_json::json!({"specversion":"1.0","id":"late-1","source":"node/9","type":"gpu.usage",
        "subject":"gamma","data":{"lease":"L9","resource":"g9","sku":"gpu.a100","region":"us-west",
        "start":"2026-11-15T00:00:00Z","end":"2026-11-15T05:00:00Z"}})
        .to_string();
    produce(&topic, &[(partition(&late), late.clone())]).await;
    consume_until_offsets(
        &a,
        &topic,
        events.len() as i64 + 1,
        Some(records.len() as i64 + 1),
    )
    .await;
    let pending = a
        .state
        .store
        .finance()
        .pending_adjustment("gamma@us-west", "2026-11")
        .await
        .unwrap();
    let mut all = events.clone();
    all.push(late);
    let offline = rate_offline(&all);
    let expected = offline
        .iter()
        .find(|i| i["account"] == "gamma" && i["region"] == "us-west")
        .unwrap();
    assert_eq!(
        &section6(&serde_json::to_value(&pending.recomputed).unwrap()),
        expected
    );
    assert!(!pending.lines.is_empty(), "{:?}", pending.lines);
    let report = a.state.store.finance().verify(None).await.unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);

    let b = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
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
    assert!(original.iter().any(|r| r.contains("@us-west")));
    assert_eq!(original, replayed);
}
