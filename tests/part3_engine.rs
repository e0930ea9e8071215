//! Issue 26 in the engine: billing-semantics part 3 price books (sections 15, 16, 17 and 20:
//! billing increments, scoped, dated and capped discounts, a yearly plan ended early with a
//! prorata refund, an auto-renewing plan, one-off charges) go through the same ingest as parts
//! 1 and 2 and close to exactly the invoices `gpubill rate` issues (`rating::rate_month`) for
//! the same events, shuffled and redelivered, with the engine restarted mid-ingest, on SQLite
//! and PostgreSQL. A late event that joins two runs of an hourly-billed sku after the close
//! changes no issued invoice; it is a pending adjustment whose recomputation is what
//! `gpubill rate` says for all the events.

use axum::http::StatusCode;
use billing_store::Store;
use gpubill_tests::*;
use serde_json::Value;

/// 2026-11-01T00:00:00+08:00 (the book's timezone is Asia/Shanghai).
const NOV_1: i64 = 1_793_462_400;
const WINDOW: i64 = 30 * 86_400;

const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

# Section 15: billed by the hour (不足一小时按一小时计) and by the 10 minutes.
[skus."gpu.h100"]
rate_per_hour = "24.00"
increment_seconds = 3600
state_rates = { stopped = "0" }

[skus."gpu.a100"]
tiers = [ { up_to_hours = 20, rate_per_hour = "12.00" }, { rate_per_hour = "10.00" } ]
increment_seconds = 600

[skus."storage.ssd"]
rate_per_hour = "0.001"
minimum_seconds = 60

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
rate_per_gb = "0.10"

[tax]
rate = "0.06"

# Section 16: a plain discount beside a scoped, dated, capped subsidy.
[[discounts]]
account = "acme"
percent = "5"

[[discounts]]
account = "acme"
id = "a100-training"
skus = ["gpu.a100"]
components = ["on_demand", "increment"]
from = "2026-11-05T00:00:00+08:00"
to = "2026-12-31T00:00:00+08:00"
percent = "30"
cap = "40.00"

# Section 17: a yearly plan ended early with a prorata refund, and an auto-renewing monthly one.
[[subscriptions]]
account = "beta"
id = "year-h100"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-03-01T00:00:00+08:00"
cycles = 2
price = "36500.00"
end = "2026-11-15T00:00:00+08:00"
refund = "prorata"

[[subscriptions]]
account = "gamma"
id = "monthly-a100"
sku = "gpu.a100"
quantity = "1"
cycle = "month"
start = "2026-10-10T00:00:00+08:00"
auto_renew = true
price = "3000.00"

# Section 12 with 17: the refund is drawn after an expiring credit, before an open one.
[[credits]]
account = "beta"
id = "expiring"
amount = "50.00"
to = "2026-11-20T00:00:00+08:00"

[[credits]]
account = "beta"
id = "open"
amount = "70.00"

# Section 20: one-off charges.
[[charges]]
account = "acme"
id = "migration-2026-11"
description = "数据迁移服务"
amount = "800.00"
at = "2026-11-12T00:00:00+08:00"

[[charges]]
account = "gamma"
id = "setup"
amount = "5"
at = "2026-10-31T23:59:59+08:00"
"#;

const ACCOUNTS: [&str; 3] = ["acme", "beta", "gamma"];
const SKUS: [&str; 3] = ["gpu.h100", "gpu.a100", "storage.ssd"];

fn usage(id: &str, account: &str, resource: &str, sku: &str, start: i64, end: i64) -> String {
    let quantity = if sku == "storage.ssd" { "500" } else { "1" };
    serde_json::json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
        "subject":account,"data":{"lease":"L1","resource":resource,"sku":sku,
        "start":rfc(start),"end":rfc(end),"quantity":quantity}})
    .to_string()
}

/// `n` events over November 2026 (Asia/Shanghai): usage of three skus in short runs that
/// often touch (so increments join and split), egress, and lease states.
fn workload(seed: u64, n: usize) -> Vec<String> {
    let mut g = Gen(seed | 1);
    let mut out = Vec::new();
    for i in 0..n {
        let id = format!("e{seed}-{i}");
        let account = ACCOUNTS[g.below(3) as usize];
        let at = NOV_1 + g.below(WINDOW as u64) as i64;
        let e = match g.below(8) {
            0..=5 => {
                let sku = SKUS[g.below(3) as usize];
                // Runs of 1 s to 2 h on a grid of 20 minutes, so that neighbours touch.
                let start = NOV_1 + (g.below((WINDOW / 1200) as u64) as i64) * 1200;
                let len = 1 + g.below(7200) as i64;
                let end = (start + len).min(NOV_1 + WINDOW);
                usage(
                    &id,
                    account,
                    &format!("r{}", g.below(2)),
                    sku,
                    start,
                    end,
                )
            }
            6 => serde_json::json!({"specversion":"1.0","id":id,"source":"gw/1","type":"net.egress",
                "subject":account,"time":rfc(at),"data":{"dest":"internet","bytes":g.below(3_000_000_000)}})
            .to_string(),
            _ => {
                let state = ["running", "stopped"][g.below(2) as usize];
                serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.state",
                    "subject":account,"data":{"lease":"L1","state":state,"at":rfc(at)}})
                .to_string()
            }
        };
        out.push(e);
    }
    out
}

/// Shuffled, 20% redelivered, in batches of 89, the engine reopened half way: the close equals
/// `gpubill rate`, every part-3 line kind is in the invoices, and acme's scoped subsidy takes
/// something beside the plain 5%.
async fn part3_terms_close_to_the_offline_invoices(db: Db) {
    for seed in [5u64, 4242] {
        let events = workload(seed, 500);
        let mut delivered = events.clone();
        delivered.extend(events.iter().step_by(5).cloned());
        shuffle(&mut delivered, seed);
        let (store, count) = ingest_with_restart(db, BOOK, &delivered, 89).await;
        assert_eq!(count, events.len(), "seed {seed}");
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
        let text = serde_json::to_string(&offline).unwrap();
        for component in ["\"increment\"", "\"subscription_refund\"", "\"charge\""] {
            assert!(
                text.contains(component),
                "seed {seed}: no {component} in {text}"
            );
        }
        let acme = offline.iter().find(|i| i["account"] == "acme").unwrap();
        let subtotal: rust_decimal::Decimal = acme["subtotal"].as_str().unwrap().parse().unwrap();
        let plain = (subtotal * rust_decimal::Decimal::new(5, 2)).round_dp(2);
        assert_ne!(
            acme["discount"].as_str().unwrap(),
            plain.to_string(),
            "seed {seed}: {acme}"
        );
    }
}
on_both!(part3_terms_close_to_the_offline_invoices);

/// Section 15 after a close: two runs of an hourly-billed sku, 10:00-10:20 and 10:40-11:00,
/// are two increments (2 h at 24.00, 48.00); the late run 10:20-10:40 joins them into one
/// 10:00-11:00 (1 h, 24.00). The issued invoice stays as it was; the pending adjustment
/// recomputes the period as `gpubill rate` does with all three events and says -24.00 plus tax.
async fn a_late_event_that_joins_two_runs_is_a_pending_adjustment(db: Db) {
    let store = Store::open(&fresh_db(db).await)
        .await
        .unwrap()
        .with_dedupe_horizon(CENTURY_S);
    store
        .admin()
        .put_pricebook(BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    // 2026-11-03T10:00:00+08:00, clear of the off-peak window.
    let ten = NOV_1 + 2 * 86_400 + 10 * 3600;
    let first = vec![
        usage("j1", "delta", "g", "gpu.h100", ten, ten + 1200),
        usage("j2", "delta", "g", "gpu.h100", ten + 2400, ten + 3600),
    ];
    let records = first.iter().map(|e| e.as_bytes().to_vec()).collect();
    assert_eq!(
        accepted_all(&store.log().ingest(records, DEC_2_2026_MS).await.unwrap()),
        2
    );
    let issued = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let delta = issued
        .iter()
        .find(|i| i.invoice.account == "delta")
        .unwrap();
    let before = serde_json::to_string(&delta.invoice).unwrap();
    assert_eq!(delta.invoice.subtotal.to_string(), "48.00", "{before}");
    let late = usage("j3", "delta", "g", "gpu.h100", ten + 1200, ten + 2400);
    assert_eq!(
        accepted_all(
            &store
                .log()
                .ingest(vec![late.clone().into_bytes()], DEC_2_2026_MS)
                .await
                .unwrap()
        ),
        1
    );
    let after = store
        .finance()
        .invoices(Some("delta"), Some("2026-11"))
        .await
        .unwrap();
    assert_eq!(serde_json::to_string(&after[0].invoice).unwrap(), before);
    let pending = store
        .finance()
        .pending_adjustment("delta", "2026-11")
        .await
        .unwrap();
    assert_eq!(pending.recomputed.subtotal.to_string(), "24.00");
    assert_eq!(pending.recomputed.total.to_string(), "25.44");
    let mut all = first.clone();
    all.push(late);
    let offline = offline_invoices(BOOK, &all, "2026-11");
    let offline_delta = offline.iter().find(|i| i["account"] == "delta").unwrap();
    assert_eq!(
        section6(&serde_json::to_value(&pending.recomputed).unwrap()),
        *offline_delta
    );
}
on_both!(a_late_event_that_joins_two_runs_is_a_pending_adjustment);

/// Issue 26's bad input over the API: each part-3 price book mistake is a 422 whose message
/// names the key (and the price book in force stays as it was).
async fn bad_part3_price_books_are_refused_naming_the_key(db: Db) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(BOOK).await;
    let cases: [(&str, String); 4] = [
        (
            "minimum_seconds",
            BOOK.replace(
                "increment_seconds = 3600\n",
                "increment_seconds = 3600\nminimum_seconds = 60\n",
            ),
        ),
        (
            "cycles",
            BOOK.replace("auto_renew = true\n", "auto_renew = true\ncycles = 3\n"),
        ),
        (
            "amount",
            BOOK.replace("amount = \"800.00\"", "amount = \"-800.00\""),
        ),
        (
            "region",
            BOOK.replace(
                "id = \"migration-2026-11\"\n",
                "id = \"migration-2026-11\"\nregion = \"mars-1\"\n",
            ),
        ),
    ];
    for (key, book) in cases {
        assert_ne!(book, BOOK, "the case {key} changes the book");
        let (s, v) = t
            .call(
                "PUT",
                "/v1/admin/pricebook",
                Some(ADMIN),
                "application/toml",
                book,
            )
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{key}: {v}");
        let message = v["message"].as_str().unwrap_or_default();
        assert!(message.contains(key), "{key}: {message}");
    }
    let versions = t.state.store.admin().pricebooks().await.unwrap();
    assert_eq!(versions.len(), 1, "a refused book is not stored");
}
on_both!(bad_part3_price_books_are_refused_naming_the_key);

const REFUND_BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"

[[subscriptions]]
account = "beta"
id = "year-h100"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-03-01T00:00:00+08:00"
cycles = 1
price = "36500.00"
end = "2026-11-15T00:00:00+08:00"
refund = "prorata"

[[credits]]
account = "beta"
id = "open"
amount = "70.00"
"#;

/// Section 17 across closes: beta's yearly plan (36,500.00 from 2026-03-01) ends on
/// 2026-11-15 with a prorata refund of the 106 unused days, 10,600.00, credited in November.
/// November's invoice (no usage after the plan's end in November) consumes none of it; the
/// refund carries to December, where 100 h of on-demand H100 (2,400.00) is paid from it
/// before the open 70.00 credit (drawn after refunds). The engine's two closes equal
/// `rating::rate_periods` over November and December.
async fn a_refund_not_consumed_carries_to_the_next_close(db: Db) {
    let url = fresh_db(db).await;
    let store = Store::open(&url)
        .await
        .unwrap()
        .with_dedupe_horizon(CENTURY_S);
    store
        .admin()
        .put_pricebook(REFUND_BOOK, DEC_2_2026_MS)
        .await
        .unwrap();
    let dec_10 = NOV_1 + 39 * 86_400;
    // 100 h as five 20-hour events (an event spans at most a day).
    let events: Vec<String> = (0..5)
        .map(|i| {
            let from = dec_10 + i * 20 * 3600;
            usage(
                &format!("u{i}"),
                "beta",
                "g0",
                "gpu.h100",
                from,
                from + 20 * 3600,
            )
        })
        .collect();
    let records = events.iter().map(|e| e.as_bytes().to_vec()).collect();
    accepted_all(&store.log().ingest(records, JAN_2_2027_MS).await.unwrap());
    let nov = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    let dec = store
        .finance()
        .close_period("2026-12", JAN_2_2027_MS)
        .await
        .unwrap();
    let book = billing_core::pricebook::PriceBook::from_toml(REFUND_BOOK).unwrap();
    let mut meter = billing_core::meter::Meter::new();
    for e in &events {
        meter.ingest(e.as_bytes());
    }
    let periods = ["2026-11", "2026-12"]
        .map(|l| billing_core::period::Period::month(l, book.timezone).unwrap());
    let offline = billing_core::rating::rate_periods(&book, &periods, &meter, "beta").unwrap();
    let engine = [&nov, &dec].map(|issued| {
        let beta = issued.iter().find(|i| i.invoice.account == "beta").unwrap();
        section6(&serde_json::to_value(&beta.invoice).unwrap())
    });
    for (e, o) in engine.iter().zip(&offline) {
        assert_eq!(e, &serde_json::to_value(&o.invoice).unwrap());
    }
    let refund_line = engine[0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["component"] == "subscription_refund")
        .unwrap()
        .clone();
    assert_eq!(refund_line["refund"], "10600.00", "{refund_line}");
    assert_eq!(engine[1]["subtotal"], "2400.00", "{}", engine[1]);
    assert_eq!(engine[1]["credit"], "2400.00", "{}", engine[1]);
    assert_eq!(engine[1]["total"], "0.00", "{}", engine[1]);
}
on_both!(a_refund_not_consumed_carries_to_the_next_close);
