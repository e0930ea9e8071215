//! Criterion micro-benchmarks of the core's hot paths. End-to-end fleet figures come from
//! `gpubill bench` (docs/benchmarks.md).

use billing_core::event::{Class, decode};
use billing_core::ledger::{AccountLedger, Runs};
use billing_core::meter::Meter;
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{RatingContext, rate_account};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rust_decimal::Decimal;
use std::hint::black_box;

const EVENT: &str = r#"{"specversion":"1.0","id":"hb-000042","source":"node/gz-a-017","type":"gpu.usage","subject":"acme","time":"2026-11-03T10:00:30Z","data":{"lease":"l-9","resource":"GPU-5f1c","sku":"gpu.h100-80g","class":"on_demand","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:00:35Z","quantity":"1"}}"#;

fn events(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let t = 1_793_700_000 + (i as i64 / 8) * 30;
            EVENT
                .replace("hb-000042", &format!("hb-{i}"))
                .replace("GPU-5f1c", &format!("GPU-{}", i % 8))
                .replace(
                    "2026-11-03T10:00:00Z",
                    &billing_core::timestamp::format_secs(t - 35),
                )
                .replace(
                    "2026-11-03T10:00:35Z",
                    &billing_core::timestamp::format_secs(t),
                )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("metering");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode one gpu.usage", |b| {
        b.iter(|| decode(black_box(EVENT.as_bytes())).is_ok())
    });
    let batch = events(10_000);
    g.throughput(Throughput::Elements(batch.len() as u64));
    g.bench_function("meter 10k heartbeats (decode + dedupe + ledger)", |b| {
        b.iter(|| {
            let mut m = Meter::new();
            for e in &batch {
                black_box(m.ingest(e.as_bytes()));
            }
            m.events()
        })
    });
    // Issue 10: part-2 events mixed in at 5% (one in twenty records).
    let mixed: Vec<String> = batch
        .iter()
        .enumerate()
        .map(|(i, e)| match i % 80 {
            19 => format!(
                r#"{{"specversion":"1.0","id":"s-{i}","source":"ctl","type":"lease.state","subject":"acme","data":{{"lease":"l-9","state":"running","at":"2026-11-03T10:00:00Z"}}}}"#
            ),
            39 => format!(
                r#"{{"specversion":"1.0","id":"p-{i}","source":"mkt","type":"spot.price","subject":"gz-a","data":{{"sku":"gpu.h100-80g","price_per_hour":"9.60","from":"2026-11-03T10:00:00Z"}}}}"#
            ),
            59 => format!(
                r#"{{"specversion":"1.0","id":"c-{i}","source":"gw","type":"net.counter","subject":"acme","data":{{"lease":"l-9","interface":"eth0","dest":"internet","bytes_total":{i},"at":"2026-11-03T10:00:00Z"}}}}"#
            ),
            79 => format!(
                r#"{{"specversion":"1.0","id":"f-{i}","source":"mon","type":"node.fault","subject":"platform","data":{{"node":"node/gz-a-017","start":"2026-11-03T10:00:00Z","end":"2026-11-03T10:01:00Z"}}}}"#
            ),
            _ => e.clone(),
        })
        .collect();
    g.bench_function("meter 10k records, 5% part-2 events", |b| {
        b.iter(|| {
            let mut m = Meter::new();
            for e in &mixed {
                black_box(m.ingest(e.as_bytes()));
            }
            m.events()
        })
    });
    g.bench_function("ledger: 10k overlapping in-order inserts", |b| {
        b.iter(|| {
            let mut r = Runs::new();
            for i in 0..10_000i64 {
                r.insert(i * 30, i * 30 + 35, Decimal::ONE);
            }
            r.as_slice().len()
        })
    });
    g.finish();

    let book = PriceBook::from_toml(&format!(
        r#"{PART2_SKU}[[reservations]]
account = "acme"
sku = "gpu.h100-80g"
quantity = "4"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
rate_per_hour = "15.00"
"#
    ))
    .unwrap();
    let period = Period::month("2026-11", book.timezone).unwrap();
    let mut ledger = AccountLedger::new();
    for day in 0..30i64 {
        for g in 0..8 {
            let from = period.start + day * 86_400 + (day % 12) * 3600;
            ledger.insert_usage(
                &format!("l-{day}"),
                &format!("GPU-{g}"),
                "gpu.h100-80g",
                Class::OnDemand,
                from,
                from + 20 * 3600,
                Decimal::ONE,
            );
        }
    }
    let ctx = RatingContext::new(&book, period.clone());
    c.bench_function("rate one account-month (8 GPUs, daily churn)", |b| {
        b.iter(|| {
            rate_account(&ctx, "acme", Some(&ledger), Decimal::ZERO)
                .unwrap()
                .invoice
                .total
        })
    });
    // Issue 26: the same ledger with part-3 terms added to the same sku and reservation.
    let part3 = PriceBook::from_toml(&part3_book()).unwrap();
    let ctx = RatingContext::new(&part3, period);
    c.bench_function("rate one account-month, part 3 terms", |b| {
        b.iter(|| {
            rate_account(&ctx, "acme", Some(&ledger), Decimal::ZERO)
                .unwrap()
                .invoice
                .total
        })
    });
}

/// The sku and off-peak window of the part-2 benchmarks: two graduated tiers, a night 30%
/// off.
const PART2_SKU: &str = r#"currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100-80g"]
tiers = [ { up_to_hours = 500, rate_per_hour = "24.00" }, { rate_per_hour = "18.00" } ]
[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"
"#;

/// Issue 29: re-rating one account of the 1M-key soak's shape after a batch: 1,000 GPUs
/// heartbeating every 30 s since the month began (every key active, a run each), 40 of them
/// extended by the batch. Rated from the keys' sum (what the engine does) and key by key
/// (what it did before). `cargo bench -p billing-core --bench core -- "soak account"`.
fn soak_account(c: &mut Criterion) {
    let book = PriceBook::from_toml(PART2_SKU).unwrap();
    let period = Period::month("2026-11", book.timezone).unwrap();
    let start = period.start + 2 * 86_400;
    let mut ledger = AccountLedger::new();
    let mut now = start + 86_400;
    for g in 0..1_000i64 {
        let end = now - (g % 30);
        ledger.insert_usage(
            &format!("l-{g}"),
            &format!("GPU-{g}"),
            "gpu.h100-80g",
            Class::OnDemand,
            start + g % 30,
            end,
            Decimal::ONE,
        );
    }
    let summed = RatingContext::new(&book, period.clone());
    let by_keys = RatingContext::new(&book, period).by_keys();
    let mut g = c.benchmark_group("soak account");
    for (name, ctx) in [("from the sum", &summed), ("key by key", &by_keys)] {
        g.bench_function(format!("40 heartbeats + re-rate 1,000 keys, {name}"), |b| {
            b.iter(|| {
                now += 1;
                for k in 0..40i64 {
                    let gpu = (now * 40 + k) % 1_000;
                    ledger.insert_usage(
                        &format!("l-{gpu}"),
                        &format!("GPU-{gpu}"),
                        "gpu.h100-80g",
                        Class::OnDemand,
                        now - 30,
                        now,
                        Decimal::ONE,
                    );
                }
                rate_account(ctx, "acme", Some(&ledger), Decimal::ZERO)
                    .unwrap()
                    .invoice
                    .total
            })
        });
    }
}

/// The skus, off-peak window, region and reservation of [`part3_book`].
const PART3_SKUS_AND_REGION: &str = r#"currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100-80g"]
increment_seconds = 60
tiers = [ { up_to_hours = 500, rate_per_hour = "24.00" }, { rate_per_hour = "18.00" } ]
[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"
[regions."ap-singapore"]
currency = "USD"
timezone = "Asia/Singapore"
[regions."ap-singapore".skus."gpu.h100-80g"]
increment_seconds = 3600
rate_per_hour = "3.20"
[[reservations]]
account = "acme"
sku = "gpu.h100-80g"
quantity = "4"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
rate_per_hour = "15.00"
"#;

/// The part-3 terms of one account (`{a}` its name), the ones `gpubill-bench bench --part3`
/// gives every account of its fleet.
const PART3_ACCOUNT_TERMS: &str =
    include_str!("../../../tests/fixtures/part3-bench/account-terms.toml");

/// The part-2 book of "rate one account-month" with part-3 terms (billing-semantics.md
/// sections 15 to 20): billing by the minute, a plain discount beside a scoped, dated and
/// capped one, a yearly plan ended inside its cycle with a prorata refund, an auto-renewing
/// yearly plan, a one-off charge, and a region (its own currency, timezone and prices; this
/// ledger has no usage there, `gpubill-bench bench --part3` rates a fleet with some).
fn part3_book() -> String {
    format!(
        "{PART3_SKUS_AND_REGION}{}",
        PART3_ACCOUNT_TERMS.replace("{a}", "acme")
    )
}

criterion_group!(benches, bench, soak_account);
criterion_main!(benches);
