//! Property tests of part 2 (sections 8 to 14): any mix of the rental events, shuffled and
//! redelivered, gives byte-identical invoices; lines add up to totals; and without part-2
//! inputs every invoice is exactly part 1's.

mod common;

use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{rate_all, rate_periods};
use common::*;
use proptest::prelude::*;
use rust_decimal::Decimal;

/// 2026-11-29T00:00:00Z: the window crosses into December.
const BASE: i64 = 1_795_910_400;
const WINDOW: i64 = 4 * 86_400;

const ACCOUNTS: [&str; 2] = ["acme", "beta"];
const SKUS: [&str; 2] = ["gpu.h100", "storage.ssd"];
const STATES: [&str; 6] = [
    "provisioning",
    "running",
    "stopped",
    "host_down",
    "preempted",
    "terminated",
];
const PRICES: [&str; 4] = ["3.20", "4.00", "8.00", "9.6"];

/// One event of any type; `id` makes it unique.
#[derive(Debug, Clone)]
enum Ev {
    Usage {
        account: usize,
        lease: usize,
        resource: usize,
        sku: usize,
        spot: bool,
        node: usize,
        start: i64,
        len: i64,
        quantity: &'static str,
    },
    Egress {
        account: usize,
        bytes: u64,
        at: i64,
    },
    State {
        account: usize,
        lease: usize,
        state: usize,
        at: i64,
    },
    Price {
        price: usize,
        from: i64,
    },
    Fault {
        node: usize,
        start: i64,
        len: i64,
    },
    Counter {
        account: usize,
        lease: usize,
        bytes_total: u64,
        at: i64,
    },
}

fn usage_ev() -> impl Strategy<Value = Ev> {
    (
        0..2usize,
        0..3usize,
        0..2usize,
        0..2usize,
        prop::bool::weighted(0.3),
        0..3usize,
        0..WINDOW,
        60..(3 * 3600i64),
        prop::sample::select(&["1", "0.5", "2", "500"][..]),
    )
        .prop_map(
            |(account, lease, resource, sku, spot, node, start, len, quantity)| Ev::Usage {
                account,
                lease,
                resource,
                sku,
                spot: spot && sku == 0,
                node,
                start,
                len,
                quantity,
            },
        )
}

fn rental_ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        (0..2usize, 0..3usize, 0..6usize, 0..WINDOW).prop_map(|(account, lease, state, at)| {
            Ev::State {
                account,
                lease,
                state,
                at,
            }
        }),
        (0..4usize, 0..WINDOW).prop_map(|(price, from)| Ev::Price { price, from }),
        (0..3usize, 0..WINDOW, 60..7200i64).prop_map(|(node, start, len)| Ev::Fault {
            node,
            start,
            len
        }),
        (0..2usize, 0..2usize, 0..10_000_000_000u64, 0..WINDOW).prop_map(
            |(account, lease, bytes_total, at)| Ev::Counter {
                account,
                lease,
                bytes_total,
                at
            }
        ),
    ]
}

fn any_ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => usage_ev(),
        1 => (0..2usize, 0..5_000_000_000u64, 0..WINDOW)
            .prop_map(|(account, bytes, at)| Ev::Egress { account, bytes, at }),
        3 => rental_ev(),
    ]
}

impl Ev {
    fn json(&self, id: usize) -> String {
        let id = format!("e{id}");
        match *self {
            Ev::Usage {
                account,
                lease,
                resource,
                sku,
                spot,
                node,
                start,
                len,
                quantity,
            } => {
                let (lease, resource) = (format!("L{lease}"), format!("r{resource}"));
                let (start, end) = (rfc(BASE + start), rfc(BASE + start + len));
                usage_from(
                    &format!("node/{node}"),
                    &U {
                        id: &id,
                        account: ACCOUNTS[account],
                        lease: &lease,
                        resource: &resource,
                        sku: SKUS[sku],
                        class: if spot { "spot" } else { "on_demand" },
                        start: &start,
                        end: &end,
                        quantity,
                    },
                )
            }
            Ev::Egress { account, bytes, at } => {
                egress(&id, ACCOUNTS[account], "internet", &rfc(BASE + at), bytes)
            }
            Ev::State {
                account,
                lease,
                state,
                at,
            } => lease_state(
                &id,
                ACCOUNTS[account],
                &format!("L{lease}"),
                STATES[state],
                &rfc(BASE + at),
            ),
            Ev::Price { price, from } => {
                spot_price(&id, "gpu.h100", PRICES[price], &rfc(BASE + from))
            }
            Ev::Fault { node, start, len } => node_fault(
                &id,
                &format!("node/{node}"),
                &rfc(BASE + start),
                &rfc(BASE + start + len),
            ),
            Ev::Counter {
                account,
                lease,
                bytes_total,
                at,
            } => net_counter(
                &id,
                ACCOUNTS[account],
                &format!("L{lease}"),
                "internet",
                bytes_total,
                &rfc(BASE + at),
            ),
        }
    }

    fn is_part1(&self) -> bool {
        matches!(self, Ev::Usage { .. } | Ev::Egress { .. })
    }
}

const PART1_BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
spot_rate_per_hour = "9.60"
minimum_seconds = 600
tiers = [ { up_to_hours = 3, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]

[skus."storage.ssd"]
rate_per_hour = "0.001"

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.70"

[egress.internet]
tiers = [ { up_to_gb = 5, rate_per_gb = "0.00" }, { rate_per_gb = "0.50" } ]

[tax]
rate = "0.06"

[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "1"
from = "2026-11-29T00:00:00Z"
to = "2026-12-01T12:00:00Z"
rate_per_hour = "15.00"

[[discounts]]
account = "beta"
percent = "10"

[[credits]]
account = "acme"
amount = "50.00"
"#;

/// Part 2's price book keys, for `owner`'s terms.
fn part2_keys(owner: &str, volume: bool) -> String {
    let mut t = String::from(
        r#"
[sla]
compensation_multiplier = "5"
attach_seconds = 600
"#,
    );
    t += &format!(
        r#"
[[packages]]
account = "{owner}"
id = "pk-b"
sku = "gpu.h100"
hours = "2"
from = "2026-11-29T00:00:00Z"
to = "2026-12-02T00:00:00Z"
price = "30.00"

[[packages]]
account = "{owner}"
id = "pk-a"
sku = "gpu.h100"
hours = "1.5"
from = "2026-11-30T00:00:00Z"
to = "2026-12-02T00:00:00Z"
price = "0"

[[subscriptions]]
account = "{owner}"
id = "sub-w"
sku = "gpu.h100"
quantity = "1"
cycle = "week"
start = "2026-11-28T00:00:00Z"
cycles = 2
price = "100.00"

[[credits]]
account = "{owner}"
id = "v1"
amount = "20.00"
to = "2026-12-01T00:00:00+08:00"

[[credits]]
account = "{owner}"
id = "v2"
amount = "7.00"
from = "2026-12-01T00:00:00+08:00"
"#
    );
    let mut book = PART1_BOOK.replace(
        "spot_rate_per_hour = \"9.60\"",
        "spot_rate_per_hour = \"9.60\"\nstate_rates = { stopped = \"0\", host_down = \"0\" }",
    );
    book = book.replace(
        "rate_per_hour = \"0.001\"",
        "rate_per_hour = \"0.001\"\nstate_rates = { stopped = \"0.0005\", provisioning = \"0\" }",
    );
    if volume {
        book = book.replace(
            "minimum_seconds = 600",
            "minimum_seconds = 600\ntier_mode = \"volume\"",
        );
    }
    book + &t
}

fn invoices(book: &PriceBook, records: &[String], period: &str) -> String {
    let mut meter = Meter::new();
    for r in records {
        assert!(
            !matches!(meter.ingest(r.as_bytes()), Admission::Rejected(_)),
            "{r}"
        );
    }
    let period = Period::month(period, book.timezone).unwrap();
    let rated = rate_all(book, period, &meter, None).unwrap();
    let invoices: Vec<_> = rated.into_iter().map(|r| r.invoice).collect();
    serde_json::to_string(&invoices).unwrap()
}

fn shuffle(records: &mut [String], seed: u64) {
    let mut state = seed;
    for i in (1..records.len()).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        records.swap(i, ((z ^ (z >> 31)) % (i as u64 + 1)) as usize);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn shuffling_and_redelivering_any_mix_of_event_types_gives_byte_identical_invoices(
        evs in prop::collection::vec(any_ev(), 1..40),
        volume in any::<bool>(),
        redeliver in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        seed in any::<u64>(),
    ) {
        let book = PriceBook::from_toml(&part2_keys("acme", volume)).unwrap();
        let mut records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let once = [invoices(&book, &records, "2026-11"), invoices(&book, &records, "2026-12")];
        for i in &redeliver {
            let r = records[i.index(records.len())].clone();
            records.push(r);
        }
        shuffle(&mut records, seed);
        let again = [invoices(&book, &records, "2026-11"), invoices(&book, &records, "2026-12")];
        prop_assert_eq!(again, once);
    }

    #[test]
    fn part_2_lines_add_up_to_the_totals_and_credit_stays_within_the_balance(
        evs in prop::collection::vec(any_ev(), 0..40),
        volume in any::<bool>(),
    ) {
        let book = PriceBook::from_toml(&part2_keys("acme", volume)).unwrap();
        let records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let m = meter(&records);
        let periods = [
            Period::month("2026-11", book.timezone).unwrap(),
            Period::month("2026-12", book.timezone).unwrap(),
        ];
        for account in ACCOUNTS {
            for rated in rate_periods(&book, &periods, &m, account).unwrap() {
                let inv = rated.invoice;
                let sum: Decimal = inv.lines.iter().map(|l| l.amount).sum();
                prop_assert_eq!(sum, inv.subtotal);
                prop_assert_eq!(inv.subtotal - inv.discount - inv.credit + inv.tax, inv.total);
                prop_assert!(inv.total >= Decimal::ZERO && inv.credit <= inv.subtotal - inv.discount);
                prop_assert!(inv.lines.iter().all(|l| l.amount.scale() == 2 && !l.quantity.is_zero()));
                for l in &inv.lines {
                    if l.compensation.is_some() || l.package.is_some() && l.unit != billing_core::invoice::Unit::Package {
                        prop_assert!(l.amount.is_zero(), "{:?}", l);
                    }
                }
            }
        }
    }

    /// Without part-2 inputs an invoice is exactly part 1's: part-2 terms of another account
    /// and part-2 sku keys that nothing triggers change no byte of acme's and beta's invoices;
    /// and part-2 events whose rules need part-2 keys (states other than `preempted` without
    /// `state_rates`, faults without `[sla]`) change nothing under a part-1 price book.
    #[test]
    fn removing_all_part_2_inputs_gives_exactly_the_part_1_invoice(
        evs in prop::collection::vec(any_ev(), 0..40),
        volume in any::<bool>(),
    ) {
        let part1 = PriceBook::from_toml(&if volume {
            PART1_BOOK.replace("minimum_seconds = 600", "minimum_seconds = 600\ntier_mode = \"volume\"")
        } else {
            PART1_BOOK.to_string()
        }).unwrap();
        let part2 = PriceBook::from_toml(&part2_keys("zeta", volume)).unwrap();
        let p1_events: Vec<String> = evs.iter().enumerate().filter(|(_, e)| e.is_part1()).map(|(i, e)| e.json(i)).collect();
        for period in ["2026-11", "2026-12"] {
            let base = invoices(&part1, &p1_events, period);
            // The part-2 book's terms are zeta's: drop zeta's invoice and compare.
            let with_keys: Vec<billing_core::Invoice> = serde_json::from_str(&invoices(&part2, &p1_events, period)).unwrap();
            let with_keys: Vec<billing_core::Invoice> = with_keys.into_iter().filter(|i| i.account != "zeta").collect();
            prop_assert_eq!(serde_json::to_string(&with_keys).unwrap(), base.clone());
            // Part-2 events that only act through part-2 keys.
            let inert: Vec<String> = evs.iter().enumerate().filter(|(_, e)| match e {
                Ev::Usage { .. } | Ev::Egress { .. } | Ev::Fault { .. } => true,
                Ev::State { state, .. } => STATES[*state] != "preempted",
                _ => false,
            }).map(|(i, e)| e.json(i)).collect();
            prop_assert_eq!(invoices(&part1, &inert, period), base);
        }
    }
}
