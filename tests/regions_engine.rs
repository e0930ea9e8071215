//! Issue 26, section 19 in the engine: regions with their own currency, timezone, skus,
//! off-peak, egress and tax, an account timezone unlike any region's, usage, egress, counters
//! and spot prices naming a region, lease states at home applying in every region, and terms
//! in a region. Each (account, region) is a billing domain of its own: the close issues one
//! invoice per domain, equal to `gpubill rate`'s (`rating::rate_month`) for the same events
//! shuffled and redelivered, on SQLite and PostgreSQL; the customer lists its regions'
//! invoices with its own; wallets hold one currency each (a USD top-up never lands in a CNY
//! wallet, a region's invoice is settled from the region's wallet).

use axum::http::StatusCode;
use billing_store::Store;
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

/// Section 19 for rental backends: quotas, holds, cost, usage and balances are a billing
/// domain's. acme has a spend limit of 40.00 USD in us-west and none at home. It rents 10 h
/// at home (240.00 CNY) and 10 h in us-west (32.00 USD) in the open December: the us-west
/// quota warns at 32.00 (80% of 40.00) and names its region; home usage moves nothing. Its
/// current cost and usage answer per region. A 1 h hold in us-west reserves 3.20 (the region's
/// rate) and fits (35.20); a 2 h one (6.40) would reach 41.60 and is denied by us-west's
/// spend_limit, while 10 h at home (240.00 CNY) is allowed. A prepaid balance of 50.00 in
/// us-west is the us-west wallet's (50.00 - 32.00 - 3.20 held = 14.80 available); the home
/// wallet stays at 0. A region the price book does not name is a 422 naming it.
async fn quotas_holds_and_costs_are_a_regions_own(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(SMALL_BOOK).await;
    let key = t.account("acme").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas?region=mars",
            r#"{"spend_limit":"40.00"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v.to_string().contains("mars"), "{v}");
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas?region=us-west",
            r#"{"spend_limit":"40.00"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let usage = |id: &str, region: Option<&str>, start: &str, end: &str| {
        let data = serde_json::json!({"lease":id,"resource":"g0","sku":"gpu.h100",
            "start":start,"end":end});
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
            "subject":"acme","data":with_region(data, region)})
        .to_string()
    };
    t.ingest(&[
        usage("h", None, "2026-12-01T00:00:00Z", "2026-12-01T10:00:00Z"),
        usage(
            "u",
            Some("us-west"),
            "2026-12-01T10:00:00Z",
            "2026-12-01T20:00:00Z",
        ),
    ])
    .await;

    let (s, d) = t.get("/v1/quota/decisions", &key).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let decisions = d["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{d}");
    assert_eq!(
        (
            &decisions[0]["account"],
            &decisions[0]["region"],
            &decisions[0]["quota"],
            &decisions[0]["kind"],
            &decisions[0]["used"],
        ),
        (
            &Value::from("acme"),
            &Value::from("us-west"),
            &Value::from("spend_limit"),
            &Value::from("warn"),
            &Value::from("32")
        ),
        "{d}"
    );

    for (query, currency, total) in [("", "CNY", "240.00"), ("?region=us-west", "USD", "32.00")] {
        let (s, c) = t.get(&format!("/v1/cost/current{query}"), &key).await;
        assert_eq!(s, StatusCode::OK, "{c}");
        assert_eq!(c["invoice"]["currency"], currency, "{c}");
        assert_eq!(c["invoice"]["total"], total, "{c}");
    }
    let (s, c) = t.get("/v1/cost/current?region=mars", &key).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{c}");
    let (s, u) = t
        .get(
            "/v1/usage?from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&granularity=day&region=us-west",
            &key,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert_eq!(u["region"], "us-west", "{u}");
    assert_eq!(u["groups"][0]["key"], "gpu.h100", "{u}");
    assert_eq!(u["groups"][0]["buckets"][0]["unit_seconds"], "36000", "{u}");

    let authorize = |region: Option<&str>, seconds: i64| {
        let mut body = serde_json::json!({"account":"acme","sku":"gpu.h100","quantity":"1",
            "seconds":seconds});
        if let Some(r) = region {
            body["region"] = r.into();
        }
        t.admin("POST", "/v1/authorize", body.to_string())
    };
    let (s, a) = authorize(Some("us-west"), 3600).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(
        (&a["decision"], &a["amount"]),
        (&"allowed".into(), &"3.20".into()),
        "{a}"
    );
    let (s, a) = authorize(Some("us-west"), 7200).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(a["decision"], "denied", "{a}");
    assert_eq!(a["quota"], "spend_limit", "{a}");
    assert_eq!(a["used"], "35.20", "{a}");
    assert_eq!(a["requested"], "6.40", "{a}");
    let (s, a) = authorize(None, 36000).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(
        (&a["decision"], &a["amount"]),
        (&"allowed".into(), &"240.00".into()),
        "{a}"
    );
    let (s, a) = authorize(Some("mars"), 60).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{a}");
    assert!(a.to_string().contains("mars"), "{a}");

    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas?region=us-west",
            r#"{"prepaid_balance":"50.00"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, b) = t.get("/v1/balance?region=us-west", &key).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["region"], "us-west", "{b}");
    assert_eq!(b["period_cost"], "32.00", "{b}");
    assert_eq!(b["held"], "3.20", "{b}");
    assert_eq!(b["prepaid_balance"], "50.00", "{b}");
    assert_eq!(b["available"], "14.80", "{b}");
    let (s, b) = t.get("/v1/balance", &key).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b.get("region"), None, "{b}");
    assert_eq!(b["period_cost"], "240.00", "{b}");
    assert_eq!(b["held"], "240.00", "{b}");
    assert_eq!(b["wallet"]["balance"], "0.00", "{b}");
}
on_both!(quotas_holds_and_costs_are_a_regions_own);

/// Section 19, numbering per region: with `us-west` numbered in series of its own (`USW`,
/// `USWCN`), November's close numbers the us-west invoices USW-2026-000001 and 000002 (acme,
/// beta, in domain order) and the home invoice INV-2026-000001: each series gapless on its own.
/// A prefix that names another series, or is not 1 to 16 of A-Z 0-9, is refused naming it.
async fn a_region_numbers_its_invoices_in_its_own_series(db: Db) {
    let open = || async { Store::open(&fresh_db(db).await).await.unwrap() };
    let store = open()
        .await
        .with_dedupe_horizon(CENTURY_S)
        .with_region_prefixes("us-west", "USW", "USWCN")
        .unwrap();
    for (invoice, note) in [
        ("INV", "EUCN"),
        ("EU", "CN"),
        ("USW", "EUCN"),
        ("eu", "EUCN"),
        ("EU", "EU"),
    ] {
        let refused = open()
            .await
            .with_region_prefixes("us-west", "USW", "USWCN")
            .unwrap()
            .with_region_prefixes("eu-frankfurt", invoice, note);
        let e = refused
            .err()
            .unwrap_or_else(|| panic!("{invoice}/{note} accepted"));
        assert!(e.contains("eu-frankfurt"), "{e}");
    }
    store
        .admin()
        .put_pricebook(SMALL_BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let usage = |id: &str, subject: &str, region: Option<&str>| {
        let data = serde_json::json!({"lease":id,"resource":"g0","sku":"gpu.h100",
            "start":"2026-11-10T00:00:00Z","end":"2026-11-10T01:00:00Z"});
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
            "subject":subject,"data":with_region(data, region)})
        .to_string()
        .into_bytes()
    };
    let events = vec![
        usage("a-home", "acme", None),
        usage("a-usw", "acme", Some("us-west")),
        usage("b-usw", "beta", Some("us-west")),
    ];
    store.log().ingest(events, DEC_2_2026_MS).await.unwrap();
    let closed = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let mut numbers: Vec<(String, String)> = closed
        .iter()
        .map(|i| {
            let v = serde_json::to_value(i).unwrap();
            (
                format!(
                    "{}@{}",
                    v["account"].as_str().unwrap(),
                    v["region"].as_str().unwrap_or("")
                ),
                v["number"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    numbers.sort();
    assert_eq!(
        numbers,
        [
            ("acme@".to_string(), "INV-2026-000001".to_string()),
            ("acme@us-west".to_string(), "USW-2026-000001".to_string()),
            ("beta@us-west".to_string(), "USW-2026-000002".to_string()),
        ]
    );
}
on_both!(a_region_numbers_its_invoices_in_its_own_series);

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
    let produced = produce_redelivered_by_subject(&topic, &events, 31).await;

    let a = TestApp::open_with(&fresh_db(Db::Postgres).await, topics.clone()).await;
    a.put_pricebook(BOOK).await;
    consume_until_offsets(&a, &topic, events.len() as i64, Some(produced)).await;
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
    produce(&topic, &[(subject_partition(&late), late.clone())]).await;
    consume_until_offsets(&a, &topic, events.len() as i64 + 1, Some(produced + 1)).await;
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
