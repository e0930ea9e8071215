//! Property tests of part 3 (sections 15 to 21, without 18): any mix of events in two
//! regions and an unnamed one, with increments, scoped and capped discounts, an ended yearly
//! subscription with a refund, charges and an account timezone, shuffled and redelivered,
//! gives byte-identical invoices (`rate_month`), whose lines add up to their totals.

mod common;

use billing_core::pricebook::PriceBook;
use billing_core::rating::rate_month;
use common::*;
use proptest::prelude::*;
use rust_decimal::Decimal;

/// 2026-11-29T00:00:00Z: the window crosses into December in every timezone used.
const BASE: i64 = 1_795_910_400;
const WINDOW: i64 = 4 * 86_400;

const ACCOUNTS: [&str; 2] = ["acme", "beta"];
const REGIONS: [Option<&str>; 3] = [None, Some("us-east"), Some("nowhere")];

const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
spot_rate_per_hour = "9.60"
increment_seconds = 600
tiers = [ { up_to_hours = 3, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
state_rates = { stopped = "0.50" }

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
rate_per_gb = "0.50"

[tax]
rate = "0.06"

[regions."us-east"]
currency = "USD"
timezone = "America/New_York"

[regions."us-east".skus."gpu.h100"]
rate_per_hour = "3.00"
spot_rate_per_hour = "1.20"
increment_seconds = 3600

[regions."us-east".egress.internet]
rate_per_gb = "0.05"

[regions."us-east".tax]
rate = "0.10"

[[accounts]]
id = "beta"
timezone = "Europe/Berlin"

[[discounts]]
account = "acme"
percent = "5"

[[discounts]]
account = "acme"
id = "h100-promo"
skus = ["gpu.h100"]
components = ["on_demand", "increment"]
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
percent = "30"
cap = "10.00"

[[discounts]]
account = "beta"
region = "us-east"
percent = "20"
cap = "0.50"

[[subscriptions]]
account = "acme"
id = "year"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-01-01T00:00:00+08:00"
auto_renew = true
price = "3650.00"
end = "2026-11-30T12:00:00Z"
refund = "prorata"

[[credits]]
account = "acme"
id = "soon"
amount = "20.00"
to = "2026-12-01T00:00:00Z"

[[credits]]
account = "beta"
region = "us-east"
amount = "1.00"

[[charges]]
account = "beta"
id = "setup"
region = "us-east"
amount = "2.50"
at = "2026-11-30T23:30:00Z"
"#;

#[derive(Debug, Clone)]
enum Ev {
    Usage {
        account: usize,
        region: usize,
        lease: u8,
        spot: bool,
        start: i64,
        len: i64,
        quantity: &'static str,
    },
    Egress {
        account: usize,
        region: usize,
        bytes: u64,
        at: i64,
    },
    Stop {
        account: usize,
        lease: u8,
        stopped: bool,
        at: i64,
    },
    Price {
        region: usize,
        price: &'static str,
        from: i64,
    },
}

fn with_region(json: String, region: usize) -> String {
    match REGIONS[region] {
        None => json,
        Some(r) => json.replacen(r#""data":{"#, &format!(r#""data":{{"region":"{r}","#), 1),
    }
}

impl Ev {
    fn json(&self, id: usize) -> String {
        let id = format!("e{id}");
        match *self {
            Ev::Usage {
                account,
                region,
                lease,
                spot,
                start,
                len,
                quantity,
            } => {
                let lease = format!("L{lease}");
                let (start, end) = (rfc(BASE + start), rfc(BASE + start + len));
                let u = U {
                    id: &id,
                    account: ACCOUNTS[account],
                    lease: &lease,
                    resource: "g0",
                    sku: "gpu.h100",
                    class: if spot { "spot" } else { "on_demand" },
                    start: &start,
                    end: &end,
                    quantity,
                };
                with_region(u.json(), region)
            }
            Ev::Egress {
                account,
                region,
                bytes,
                at,
            } => with_region(
                egress(&id, ACCOUNTS[account], "internet", &rfc(BASE + at), bytes),
                region,
            ),
            Ev::Stop {
                account,
                lease,
                stopped,
                at,
            } => lease_state(
                &id,
                ACCOUNTS[account],
                &format!("L{lease}"),
                if stopped { "stopped" } else { "running" },
                &rfc(BASE + at),
            ),
            Ev::Price {
                region,
                price,
                from,
            } => with_region(
                spot_price(&id, "gpu.h100", price, &rfc(BASE + from)),
                region,
            ),
        }
    }
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        6 => (0..2usize, 0..3usize, 0..3u8, any::<bool>(), 0..WINDOW, 1..7_200i64,
              prop::sample::select(vec!["1", "0.5", "2"]))
            .prop_map(|(account, region, lease, spot, start, len, quantity)| Ev::Usage {
                account, region, lease, spot, start, len, quantity,
            }),
        2 => (0..2usize, 0..3usize, 1..3_000_000_000u64, 0..WINDOW)
            .prop_map(|(account, region, bytes, at)| Ev::Egress { account, region, bytes, at }),
        2 => (0..2usize, 0..3u8, any::<bool>(), 0..WINDOW)
            .prop_map(|(account, lease, stopped, at)| Ev::Stop { account, lease, stopped, at }),
        1 => (0..2usize, prop::sample::select(vec!["0.80", "1.5", "3.00"]), 0..WINDOW)
            .prop_map(|(region, price, from)| Ev::Price { region, price, from }),
    ]
}

/// Every invoice of the months the window touches, as JSON, and the unpriced items.
fn rate_json(book: &PriceBook, records: &[String]) -> String {
    let meter = meter(records);
    let mut out = String::new();
    for label in ["2026-11", "2026-12"] {
        let month = rate_month(book, label, &meter, None).unwrap();
        for r in &month.rated {
            let inv = &r.invoice;
            let sum: Decimal = inv.lines.iter().map(|l| l.amount).sum();
            assert_eq!(sum, inv.subtotal, "lines add up to the subtotal");
            assert_eq!(
                inv.subtotal - inv.discount - inv.credit + inv.tax,
                inv.total,
                "totals add up"
            );
            assert!(inv.discount <= inv.subtotal && inv.discount >= Decimal::ZERO);
            assert!(inv.credit >= Decimal::ZERO && inv.total >= Decimal::ZERO);
            assert!(inv.region.is_some(), "a part-3 book names every region");
            out.push_str(&serde_json::to_string(inv).unwrap());
            out.push_str(&serde_json::to_string(&r.unpriced).unwrap());
        }
        out.push_str(&serde_json::to_string(&month.unpriced).unwrap());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn part_3_invoices_are_a_function_of_the_set_of_events(
        events in prop::collection::vec(event(), 1..40),
        seed in any::<u64>(),
        redeliver in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let records: Vec<String> = events.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let want = rate_json(&book, &records);
        // Shuffled (a seeded Fisher-Yates) with some records delivered again.
        let mut sent = records.clone();
        for i in &redeliver {
            sent.push(records[i.index(records.len())].clone());
        }
        let mut state = seed | 1;
        for i in (1..sent.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            sent.swap(i, (state % (i as u64 + 1)) as usize);
        }
        prop_assert_eq!(rate_json(&book, &sent), want);
    }
}
