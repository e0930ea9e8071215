//! Part 2 of billing-semantics.md (sections 8 to 14) with worked numbers, from events to
//! invoice lines.

mod common;

use billing_core::invoice::Component::{self, *};
use billing_core::lease::LeaseState;
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{rate_all, rate_periods};
use common::*;

/// UTC keeps local times readable; one test uses Asia/Shanghai on purpose.
const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"

[skus."storage.ssd"]
rate_per_hour = "0.001"
"#;

fn with(extra: &str) -> String {
    format!("{BOOK}\n{extra}")
}

fn u<'a>(id: &'a str, lease: &'a str, resource: &'a str, start: &'a str, end: &'a str) -> U<'a> {
    U {
        id,
        lease,
        resource,
        start,
        end,
        ..U::default()
    }
}

// ---- section 8: lease states ---------------------------------------------------------------

#[test]
fn a_lease_stopped_for_3_days_bills_its_500_gb_volume_at_the_stopped_rate_and_no_gpu_seconds() {
    let book = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "24.00"
state_rates = { stopped = "0" }

[skus."storage.ssd"]
rate_per_hour = "0.001"
state_rates = { stopped = "0.0005" }
"#;
    let mut events = vec![
        // The GPU runs on Nov 1 and Nov 5; the node agent reports nothing while stopped.
        u(
            "g1",
            "L1",
            "gpu0",
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
        )
        .json(),
        u(
            "g5",
            "L1",
            "gpu0",
            "2026-11-05T00:00:00Z",
            "2026-11-06T00:00:00Z",
        )
        .json(),
        lease_state("s1", "acme", "L1", "stopped", "2026-11-02T00:00:00Z"),
        lease_state("s2", "acme", "L1", "running", "2026-11-05T00:00:00Z"),
    ];
    // The volume reports every day of Nov 1 to Nov 5, 500 GB.
    for day in 1..=5 {
        let (start, end) = (
            format!("2026-11-{day:02}T00:00:00Z"),
            format!("2026-11-{:02}T00:00:00Z", day + 1),
        );
        let id = format!("v{day}");
        events.push(
            U {
                id: &id,
                resource: "vol0",
                sku: "storage.ssd",
                quantity: "500",
                start: &start,
                end: &end,
                ..U::default()
            }
            .json(),
        );
    }
    let rated = rate(book, "2026-11", &events);
    let inv = invoice(&rated, "acme");
    // GPU: 2 days = 172,800 s x 24.00 / 3600 = 1152.00; nothing while stopped.
    // Volume running: 500 GB x 48 h x 0.001 = 24.00.
    assert_eq!(
        lines2(inv, OnDemand),
        [
            l2("gpu.h100", "", "172800", "1152.00"),
            l2("storage.ssd", "", "86400000", "24.00"),
        ]
    );
    // Volume stopped: 500 GB x 72 h = 129,600,000 GB-seconds x 0.0005 / 3600 = 18.00.
    assert_eq!(
        lines2(inv, State(LeaseState::Stopped)),
        [l2("storage.ssd", "", "129600000", "18.00")]
    );
    assert_eq!(inv.subtotal.to_string(), "1194.00");
    let json = serde_json::to_string(&inv.lines).unwrap();
    assert!(json.contains(r#""component":"state:stopped""#), "{json}");
}

#[test]
fn gpu_heartbeats_that_continue_while_host_down_bill_at_0() {
    let book = BOOK.replace(
        "spot_rate_per_hour = \"9.60\"",
        "spot_rate_per_hour = \"9.60\"\nstate_rates = { host_down = \"0\" }",
    );
    let rated = rate(
        &book,
        "2026-11",
        &[
            u(
                "h",
                "L1",
                "gpu0",
                "2026-11-03T10:00:00Z",
                "2026-11-03T12:00:00Z",
            )
            .json(),
            lease_state("d", "acme", "L1", "host_down", "2026-11-03T11:00:00Z"),
            lease_state("r", "acme", "L1", "running", "2026-11-03T11:30:00Z"),
        ],
    );
    let inv = invoice(&rated, "acme");
    // 5,400 s running x 24.00 = 36.00; 1,800 s host_down at 0.
    assert_eq!(lines2(inv, OnDemand), [l2("gpu.h100", "", "5400", "36.00")]);
    assert_eq!(
        lines2(inv, State(LeaseState::HostDown)),
        [l2("gpu.h100", "", "1800", "0.00")]
    );
    assert_eq!(inv.total.to_string(), "36.00");
}

#[test]
fn the_minimum_charge_reads_only_the_seconds_left_after_states() {
    let book = r#"
currency = "CNY"
timezone = "UTC"
[skus."gpu.h100"]
rate_per_hour = "36.00"
minimum_seconds = 600
state_rates = { provisioning = "0" }
"#;
    // 300 s provisioning then 100 s running: the minimum sees 100 covered seconds.
    let rated = rate(
        book,
        "2026-11",
        &[
            u(
                "h",
                "L1",
                "gpu0",
                "2026-11-03T10:00:00Z",
                "2026-11-03T10:06:40Z",
            )
            .json(),
            lease_state("p", "acme", "L1", "provisioning", "2026-11-03T10:00:00Z"),
            lease_state("r", "acme", "L1", "running", "2026-11-03T10:05:00Z"),
        ],
    );
    let inv = invoice(&rated, "acme");
    // 100 s x 36.00 = 1.00; minimum (600 - 100) x 36.00 = 5.00; provisioning 300 s at 0.
    assert_eq!(lines2(inv, OnDemand), [l2("gpu.h100", "", "100", "1.00")]);
    assert_eq!(lines2(inv, Minimum), [l2("gpu.h100", "", "500", "5.00")]);
    assert_eq!(
        lines2(inv, State(LeaseState::Provisioning)),
        [l2("gpu.h100", "", "300", "0.00")]
    );
}

// ---- section 9: spot curves and interruption -------------------------------------------------

#[test]
fn spot_preempted_after_40_minutes_is_waived_and_after_2_hours_is_billed_at_the_curve() {
    let spot = |id: &'static str, lease: &'static str, end: &'static str| {
        U {
            id,
            lease,
            class: "spot",
            start: "2026-11-03T10:00:00Z",
            end,
            ..U::default()
        }
        .json()
    };
    let rated = rate(
        BOOK,
        "2026-11",
        &[
            spot("a", "S1", "2026-11-03T10:40:00Z"),
            lease_state("pa", "acme", "S1", "preempted", "2026-11-03T10:40:00Z"),
            spot("b", "S2", "2026-11-03T12:00:00Z"),
            lease_state("pb", "acme", "S2", "preempted", "2026-11-03T12:00:00Z"),
            spot_price("c1", "gpu.h100", "8.00", "2026-11-03T11:00:00Z"),
        ],
    );
    let inv = invoice(&rated, "acme");
    // S1: 2,400 s < 3,600 and preempted: waived. S2: 3,600 s at 9.60 (before the curve),
    // 3,600 s at 8.00. Lines sort by price after sku.
    assert_eq!(
        lines2(inv, Spot),
        [
            l2("gpu.h100", "8.00", "3600", "8.00"),
            l2("gpu.h100", "9.60", "3600", "9.60"),
        ]
    );
    assert_eq!(
        lines2(inv, SpotInterrupted),
        [l2("gpu.h100", "", "2400", "0.00")]
    );
    assert_eq!(inv.subtotal.to_string(), "17.60");
}

#[test]
fn a_price_curve_change_in_the_middle_of_a_heartbeat_splits_its_seconds() {
    let rated = rate(
        BOOK,
        "2026-11",
        &[
            U {
                id: "h",
                class: "spot",
                start: "2026-11-03T10:00:00Z",
                end: "2026-11-03T11:00:00Z",
                ..U::default()
            }
            .json(),
            spot_price("p0", "gpu.h100", "4.00", "2026-11-03T09:00:00Z"),
            // Two points at one `from`: the lowest price stands.
            spot_price("p1", "gpu.h100", "8.00", "2026-11-03T10:15:00.5Z"),
            spot_price("p2", "gpu.h100", "9.00", "2026-11-03T10:15:00Z"),
        ],
    );
    let inv = invoice(&rated, "acme");
    // 10:00-10:15 (900 s) at 4.00 = 1.00; 10:15-11:00 (2,700 s) at 8.00 = 6.00.
    assert_eq!(
        lines2(inv, Spot),
        [
            l2("gpu.h100", "4.00", "900", "1.00"),
            l2("gpu.h100", "8.00", "2700", "6.00"),
        ]
    );
}

#[test]
fn spot_without_a_curve_or_a_spot_rate_is_unpriced() {
    let rated = rate(
        "currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"1\"\n",
        "2026-11",
        &[U {
            id: "h",
            sku: "g",
            class: "spot",
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T11:00:00Z",
            ..U::default()
        }
        .json()],
    );
    assert_eq!(rated[0].unpriced.len(), 1);
    assert_eq!(rated[0].unpriced[0].quantity.to_string(), "3600");
    assert!(invoice(&rated, "acme").lines.is_empty());
}

// ---- section 10: SLA compensation ------------------------------------------------------------

const SLA: &str = "[sla]\ncompensation_multiplier = \"5\"\n";

#[test]
fn a_30_minute_node_fault_is_compensated_5x_onto_the_credit_balance_and_carried_over() {
    let book = PriceBook::from_toml(&with(SLA)).unwrap();
    let events = [
        // The node ran L1 until the fault; L1 came back elsewhere only in December.
        usage_from(
            "node/7",
            &u(
                "n1",
                "L1",
                "gpu0",
                "2026-11-30T22:00:00Z",
                "2026-11-30T23:00:00Z",
            ),
        ),
        node_fault(
            "f1",
            "node/7",
            "2026-11-30T23:00:00Z",
            "2026-11-30T23:20:00Z",
        ),
        // Touching: merged into one 30-minute fault.
        node_fault(
            "f2",
            "node/7",
            "2026-11-30T23:20:00Z",
            "2026-11-30T23:30:00Z",
        ),
        usage_from(
            "node/8",
            &u(
                "d1",
                "L1",
                "gpu0",
                "2026-12-02T10:00:00Z",
                "2026-12-02T11:00:00Z",
            ),
        ),
    ];
    let m = meter(&events);
    let nov = Period::month("2026-11", book.timezone).unwrap();
    let dec = Period::month("2026-12", book.timezone).unwrap();
    // Downtime 1,800 s x quantity 1: 5 x 1,800 x 24.00 / 3600 = 60.00 credited.
    let rated = rate_all(&book, nov.clone(), &m, None).unwrap();
    let inv = invoice(&rated, "acme");
    assert_eq!(
        lines2(inv, SlaCompensation),
        [l2("gpu.h100", "60.00", "1800", "0.00")]
    );
    // The invoice (24.00) is smaller than the compensation: credit 24.00, total 0.
    assert_eq!(totals(inv), ["24.00", "0.00", "24.00", "0.00", "0.00"]);
    // Carried over: December's 24.00 takes 24.00 of the 36.00 left.
    let both = rate_periods(&book, &[nov, dec], &m, "acme").unwrap();
    assert_eq!(
        totals(&both[1].invoice),
        ["24.00", "0.00", "24.00", "0.00", "0.00"]
    );
    assert!(lines2(&both[1].invoice, SlaCompensation).is_empty());
}

#[test]
fn sla_downtime_excludes_seconds_covered_elsewhere_and_terminated_leases() {
    let book = with(SLA);
    let rated = rate(
        &book,
        "2026-11",
        &[
            // L1 moves to node/8 ten minutes into the fault: downtime 600 s, quantity 2.
            usage_from(
                "node/7",
                &U {
                    quantity: "2",
                    ..u(
                        "a",
                        "L1",
                        "gpu0",
                        "2026-11-03T09:58:00Z",
                        "2026-11-03T10:00:00Z",
                    )
                },
            ),
            usage_from(
                "node/8",
                &u(
                    "b",
                    "L1",
                    "gpu0",
                    "2026-11-03T10:10:00Z",
                    "2026-11-03T11:00:00Z",
                ),
            ),
            // L2 was terminated at the fault's start: not affected.
            usage_from(
                "node/7",
                &u(
                    "c",
                    "L2",
                    "gpu1",
                    "2026-11-03T09:00:00Z",
                    "2026-11-03T10:00:00Z",
                ),
            ),
            lease_state("t", "acme", "L2", "terminated", "2026-11-03T10:00:00Z"),
            // L3 left the node more than attach_seconds (300) before the fault: not affected.
            usage_from(
                "node/7",
                &u(
                    "e",
                    "L3",
                    "gpu2",
                    "2026-11-03T09:00:00Z",
                    "2026-11-03T09:54:59Z",
                ),
            ),
            node_fault(
                "f",
                "node/7",
                "2026-11-03T10:00:00Z",
                "2026-11-03T10:30:00Z",
            ),
        ],
    );
    let inv = invoice(&rated, "acme");
    // 5 x 2 x 600 x 24.00 / 3600 = 40.00 credited for 1,200 unit-seconds of downtime.
    assert_eq!(
        lines2(inv, SlaCompensation),
        [l2("gpu.h100", "40.00", "1200", "0.00")]
    );
}

#[test]
fn without_a_compensation_multiplier_there_is_no_compensation() {
    let rated = rate(
        &with("[sla]\nattach_seconds = 600\n"),
        "2026-11",
        &[
            usage_from(
                "node/7",
                &u(
                    "a",
                    "L1",
                    "gpu0",
                    "2026-11-03T09:00:00Z",
                    "2026-11-03T10:00:00Z",
                ),
            ),
            node_fault(
                "f",
                "node/7",
                "2026-11-03T10:00:00Z",
                "2026-11-03T10:30:00Z",
            ),
        ],
    );
    let inv = invoice(&rated, "acme");
    assert!(lines2(inv, SlaCompensation).is_empty());
    assert_eq!(inv.credit.to_string(), "0.00");
}

// ---- section 11: counters ----------------------------------------------------------------

#[test]
fn a_counter_reset_counts_the_new_value_and_joins_net_egress() {
    let book = with(
        "[egress.internet]\ntiers = [ { up_to_gb = 5, rate_per_gb = \"0.00\" }, { rate_per_gb = \"0.50\" } ]\n",
    );
    let rated = rate(
        &book,
        "2026-11",
        &[
            // Baseline 1 GB, +4 GB, reboot to 2 GB (+2 GB): 6 GB from the counter.
            net_counter(
                "c1",
                "acme",
                "L1",
                "internet",
                1_000_000_000,
                "2026-11-03T10:00:00Z",
            ),
            net_counter(
                "c2",
                "acme",
                "L1",
                "internet",
                5_000_000_000,
                "2026-11-03T11:00:00Z",
            ),
            net_counter(
                "c3",
                "acme",
                "L1",
                "internet",
                2_000_000_000,
                "2026-11-03T12:00:00Z",
            ),
            // ... plus 1 GB of net.egress: 7 GB, 5 free and 2 at 0.50.
            egress(
                "x",
                "acme",
                "internet",
                "2026-11-03T12:00:00Z",
                1_000_000_000,
            ),
        ],
    );
    let inv = invoice(&rated, "acme");
    assert_eq!(
        lines(inv, Egress),
        [line(0, "", "5", "0.00"), line(1, "", "2", "1.00")]
    );
}

// ---- section 12: packages and expiring credits ---------------------------------------------

#[test]
fn a_package_crossing_a_period_boundary_with_a_reservation_and_off_peak() {
    let book = with(
        r#"
[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.50"

[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "1"
from = "2026-11-01T00:00:00Z"
to = "2027-01-01T00:00:00Z"
rate_per_hour = "6.00"

[[packages]]
account = "acme"
id = "pk1"
sku = "gpu.h100"
hours = "10"
from = "2026-11-30T00:00:00Z"
to = "2027-01-01T00:00:00Z"
price = "50.00"
"#,
    );
    // Two GPUs from Nov 30 20:00 to Dec 1 12:00 (16 h): the reservation covers one, the
    // other overflows 16 unit-hours.
    let events = [
        u(
            "a",
            "L1",
            "gpu0",
            "2026-11-30T20:00:00Z",
            "2026-12-01T12:00:00Z",
        )
        .json(),
        u(
            "b",
            "L1",
            "gpu1",
            "2026-11-30T20:00:00Z",
            "2026-12-01T12:00:00Z",
        )
        .json(),
    ];
    // November: the package covers 4 h (20:00-24:00); it is billed once, here.
    let nov = rate(&book, "2026-11", &events);
    let inv = invoice(&nov, "acme");
    assert_eq!(lines2(inv, Package), [l2("gpu.h100", "pk1", "1", "50.00")]);
    assert_eq!(
        lines2(inv, PackageUsage),
        [l2("gpu.h100", "pk1", "14400", "0.00")]
    );
    assert_eq!(
        lines2(inv, ReservedUsage),
        [l2("gpu.h100", "", "14400", "0.00")]
    );
    assert!(lines2(inv, OnDemand).is_empty());
    // 30 days x 24 h x 6.00 = 4320.00
    assert_eq!(
        lines2(inv, ReservedCommitment),
        [l2("gpu.h100", "", "2592000", "4320.00")]
    );
    let json = serde_json::to_string(&inv.lines).unwrap();
    assert!(json.contains(r#""unit":"package""#), "{json}");
    // December: 6 h left cover 00:00-06:00; 06:00-08:00 off-peak 2 h x 24 x 0.5 = 24.00;
    // 08:00-12:00 4 h x 24 = 96.00.
    let dec = rate(&book, "2026-12", &events);
    let inv = invoice(&dec, "acme");
    assert!(lines2(inv, Package).is_empty());
    assert_eq!(
        lines2(inv, PackageUsage),
        [l2("gpu.h100", "pk1", "21600", "0.00")]
    );
    assert_eq!(
        lines(inv, OnDemand),
        [
            line(0, "0.5", "7200", "24.00"),
            line(0, "1", "14400", "96.00")
        ]
    );
    assert_eq!(
        lines2(inv, ReservedUsage),
        [l2("gpu.h100", "", "43200", "0.00")]
    );
}

#[test]
fn volume_tiers_price_only_what_the_package_left() {
    let book = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
tier_mode = "volume"
tiers = [
  { up_to_hours = 10, rate_per_hour = "10.00" },
  { up_to_hours = 100, rate_per_hour = "8.00" },
  { rate_per_hour = "6.00" },
]

[[packages]]
account = "acme"
id = "trial"
sku = "gpu.h100"
hours = "5"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "0"
"#;
    // 12 h of usage: the free trial takes 5 h, T = 7 h <= 10 h picks tier 0: 7 x 10 = 70.00
    // (without the package T = 12 h would pick tier 1: 96.00).
    let rated = rate(
        book,
        "2026-11",
        &[u(
            "a",
            "L1",
            "gpu0",
            "2026-11-03T00:00:00Z",
            "2026-11-03T12:00:00Z",
        )
        .json()],
    );
    let inv = invoice(&rated, "acme");
    assert_eq!(lines(inv, OnDemand), [line(0, "1", "25200", "70.00")]);
    assert_eq!(
        lines2(inv, PackageUsage),
        [l2("gpu.h100", "trial", "18000", "0.00")]
    );
    assert_eq!(lines2(inv, Package), [l2("gpu.h100", "trial", "1", "0.00")]);
    assert_eq!(inv.subtotal.to_string(), "70.00");
}

#[test]
fn packages_draw_earliest_to_first_then_smaller_id() {
    let book = with(
        r#"
[[packages]]
account = "acme"
id = "b"
sku = "gpu.h100"
hours = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "0"

[[packages]]
account = "acme"
id = "a"
sku = "gpu.h100"
hours = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "0"

[[packages]]
account = "acme"
id = "early"
sku = "gpu.h100"
hours = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-11-20T00:00:00Z"
price = "0"
"#,
    );
    // 2.5 h: "early" 1 h, then "a" 1 h, then "b" 0.5 h.
    let rated = rate(
        &book,
        "2026-11",
        &[u(
            "x",
            "L1",
            "gpu0",
            "2026-11-03T00:00:00Z",
            "2026-11-03T02:30:00Z",
        )
        .json()],
    );
    let inv = invoice(&rated, "acme");
    assert_eq!(
        lines2(inv, PackageUsage),
        [
            l2("gpu.h100", "a", "3600", "0.00"),
            l2("gpu.h100", "b", "1800", "0.00"),
            l2("gpu.h100", "early", "3600", "0.00"),
        ]
    );
    assert!(lines2(inv, OnDemand).is_empty());
}

#[test]
fn an_expiring_credit_applies_to_the_periods_it_overlaps_and_not_after() {
    let book = with(
        r#"
[[credits]]
account = "acme"
id = "voucher-nov"
amount = "10.00"
to = "2026-11-15T00:00:00Z"

[[credits]]
account = "acme"
id = "voucher-dec"
amount = "20.00"
from = "2026-12-01T00:00:00Z"
"#,
    );
    let events = [
        u(
            "a",
            "L1",
            "gpu0",
            "2026-11-20T00:00:00Z",
            "2026-11-20T01:00:00Z",
        )
        .json(),
        u(
            "b",
            "L1",
            "gpu0",
            "2026-12-20T00:00:00Z",
            "2026-12-20T01:00:00Z",
        )
        .json(),
    ];
    // November: 24.00 owed; the November voucher applies (10.00), December's does not.
    let nov = rate(&book, "2026-11", &events);
    assert_eq!(
        totals(invoice(&nov, "acme")),
        ["24.00", "0.00", "10.00", "0.00", "14.00"]
    );
    // December: the November voucher has expired; December's applies (20.00).
    let dec = rate(&book, "2026-12", &events);
    assert_eq!(
        totals(invoice(&dec, "acme")),
        ["24.00", "0.00", "20.00", "0.00", "4.00"]
    );
}

#[test]
fn across_periods_an_expiring_credit_is_drawn_before_an_open_one_and_its_rest_is_lost() {
    let book = PriceBook::from_toml(&with(
        r#"
[[credits]]
account = "acme"
amount = "30.00"

[[credits]]
account = "acme"
id = "v"
amount = "30.00"
to = "2026-12-01T00:00:00Z"
"#,
    ))
    .unwrap();
    let m = meter(&[
        u(
            "a",
            "L1",
            "gpu0",
            "2026-11-20T00:00:00Z",
            "2026-11-20T01:00:00Z",
        )
        .json(),
        u(
            "b",
            "L1",
            "gpu0",
            "2026-12-20T00:00:00Z",
            "2026-12-20T01:00:00Z",
        )
        .json(),
    ]);
    let periods = [
        Period::month("2026-11", book.timezone).unwrap(),
        Period::month("2026-12", book.timezone).unwrap(),
    ];
    let both = rate_periods(&book, &periods, &m, "acme").unwrap();
    // November 24.00 from the voucher (6.00 of it expire); December 24.00 from the open 30.00.
    assert_eq!(both[0].invoice.credit.to_string(), "24.00");
    assert_eq!(both[1].invoice.credit.to_string(), "24.00");
    let jan = Period::month("2027-01", book.timezone).unwrap();
    let three = rate_periods(
        &book,
        &[periods[0].clone(), periods[1].clone(), jan],
        &m,
        "acme",
    )
    .unwrap();
    assert_eq!(three[2].invoice.credit.to_string(), "0.00");
}

// ---- section 13: subscriptions -------------------------------------------------------------

#[test]
fn a_month_subscription_starting_on_the_31st_bills_each_cycle_up_front() {
    let book = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"

[[subscriptions]]
account = "acme"
id = "sub-x2"
sku = "gpu.h100"
quantity = "2"
cycle = "month"
start = "2026-10-31T00:00:00+08:00"
cycles = 3
price = "1000.00"
"#;
    let events = [
        // 3 GPUs for 2 h on Nov 10: the subscription covers 2, one overflows.
        U {
            quantity: "3",
            ..u(
                "a",
                "L1",
                "gpu0",
                "2026-11-10T10:00:00+08:00",
                "2026-11-10T12:00:00+08:00",
            )
        }
        .json(),
    ];
    // Cycle 1 starts Nov 30 (November has no 31st) and runs to Dec 31: 31 days x 2.
    let nov = rate(book, "2026-11", &events);
    let inv = invoice(&nov, "acme");
    assert_eq!(
        lines2(inv, Subscription),
        [l2("gpu.h100", "sub-x2", "5356800", "1000.00")]
    );
    assert_eq!(
        lines2(inv, ReservedUsage),
        [l2("gpu.h100", "", "14400", "0.00")]
    );
    assert_eq!(lines2(inv, OnDemand), [l2("gpu.h100", "", "7200", "48.00")]);
    assert_eq!(inv.subtotal.to_string(), "1048.00");
    // Cycle 2 starts Dec 31 and runs to Jan 31: 31 days x 2; cycle 0 was October's.
    let dec = rate(book, "2026-12", &events);
    assert_eq!(
        lines2(invoice(&dec, "acme"), Subscription),
        [l2("gpu.h100", "sub-x2", "5356800", "1000.00")]
    );
    let oct = rate(book, "2026-10", &events);
    assert_eq!(
        lines2(invoice(&oct, "acme"), Subscription),
        [l2("gpu.h100", "sub-x2", "5184000", "1000.00")] // Oct 31 -> Nov 30: 30 days
    );
    let jan = rate(book, "2027-01", &events);
    assert!(lines2(invoice(&jan, "acme"), Subscription).is_empty());
}

// ---- section 14: line order ------------------------------------------------------------------

#[test]
fn part_2_lines_sort_by_component_name_then_sku_tier_multiplier_price_package() {
    let book = with(
        r#"
[skus.a]
rate_per_hour = "1.00"
state_rates = { stopped = "0.10", host_down = "0" }

[[packages]]
account = "acme"
id = "p"
sku = "a"
hours = "1"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "1.00"
"#,
    );
    let rated = rate(
        &book,
        "2026-11",
        &[
            U {
                sku: "a",
                ..u(
                    "x",
                    "L1",
                    "r",
                    "2026-11-03T00:00:00Z",
                    "2026-11-03T05:00:00Z",
                )
            }
            .json(),
            lease_state("s", "acme", "L1", "stopped", "2026-11-03T02:00:00Z"),
            lease_state("d", "acme", "L1", "host_down", "2026-11-03T03:00:00Z"),
            lease_state("r", "acme", "L1", "running", "2026-11-03T04:00:00Z"),
        ],
    );
    let order: Vec<String> = invoice(&rated, "acme")
        .lines
        .iter()
        .map(|l| l.component.as_str().to_string())
        .collect();
    assert_eq!(
        order,
        [
            "on_demand",
            "package",
            "package_usage",
            "state:host_down",
            "state:stopped"
        ]
    );
    assert_eq!(
        Component::parse("state:stopped"),
        Some(State(LeaseState::Stopped))
    );
}
