//! Every rule of billing-semantics.md with a worked number, from events to invoice lines.

mod common;

use billing_core::invoice::Component::*;
use billing_core::meter::{Admission, Meter};
use billing_core::rating::Rated;
use common::*;

const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"

[skus."vgpu.t4-quarter"]
rate_per_hour = "2.40"
"#;

fn with(extra: &str) -> String {
    format!("{BOOK}\n{extra}")
}

fn usage(u: U<'_>) -> String {
    u.json()
}

#[test]
fn two_heartbeats_overlapping_by_5s_bill_the_union_55s_not_60s() {
    let rated = rate(
        BOOK,
        "2026-11",
        &[
            usage(U {
                id: "h1",
                start: "2026-11-03T10:00:00+08:00",
                end: "2026-11-03T10:00:30+08:00",
                ..U::default()
            }),
            usage(U {
                id: "h2",
                start: "2026-11-03T10:00:25+08:00",
                end: "2026-11-03T10:00:55+08:00",
                ..U::default()
            }),
        ],
    );
    let inv = invoice(&rated, "acme");
    // 55 s x 24.00 / 3600 = 0.3666.. -> 0.37
    assert_eq!(lines(inv, OnDemand), [line(0, "1", "55", "0.37")]);
}

#[test]
fn a_quarter_vgpu_share_bills_a_quarter_of_the_seconds() {
    let rated = rate(
        BOOK,
        "2026-11",
        &[usage(U {
            sku: "vgpu.t4-quarter",
            quantity: "0.25",
            start: "2026-11-10T09:00:00+08:00",
            end: "2026-11-10T10:00:00+08:00",
            ..U::default()
        })],
    );
    // 3,600 s x 0.25 = 900 unit-seconds x 2.40 / 3600 = 0.60
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [line(0, "1", "900", "0.60")]
    );
}

#[test]
fn offpeak_window_22_to_06_shanghai_bills_night_seconds_at_the_multiplier() {
    let book = with("[[offpeak]]\nfrom = \"22:00\"\nto = \"06:00\"\nmultiplier = \"0.70\"\n");
    let rated = rate(
        &book,
        "2026-11",
        &[
            // 21:00-23:00: one hour at full rate, one off-peak.
            usage(U {
                id: "a",
                start: "2026-11-03T21:00:00+08:00",
                end: "2026-11-03T23:00:00+08:00",
                ..U::default()
            }),
            // 05:00-07:00 next morning: one hour off-peak (wrapped past midnight), one full.
            usage(U {
                id: "b",
                start: "2026-11-04T05:00:00+08:00",
                end: "2026-11-04T07:00:00+08:00",
                ..U::default()
            }),
        ],
    );
    // 7,200 s x 24 x 0.70 / 3600 = 33.60; 7,200 s x 24 / 3600 = 48.00
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [
            line(0, "0.7", "7200", "33.60"),
            line(0, "1", "7200", "48.00")
        ]
    );
}

const BERLIN: &str = r#"
currency = "EUR"
timezone = "Europe/Berlin"

[skus."gpu.h100"]
rate_per_hour = "10.00"

[[offpeak]]
from = "01:00"
to = "04:00"
multiplier = "0.50"
"#;

#[test]
fn dst_spring_night_in_berlin_offpeak_window_across_the_change_is_two_real_hours() {
    // 2026-03-29 02:00 CET -> 03:00 CEST. Usage 00:00 CET (23:00Z) to 06:00 CEST (04:00Z):
    // 5 real hours; the window 01:00-04:00 local is 00:00Z-02:00Z, 2 real hours.
    let rated = rate(
        BERLIN,
        "2026-03",
        &[usage(U {
            start: "2026-03-28T23:00:00Z",
            end: "2026-03-29T04:00:00Z",
            ..U::default()
        })],
    );
    let inv = invoice(&rated, "acme");
    assert_eq!(inv.period.start, "2026-02-28T23:00:00Z");
    assert_eq!(inv.period.end, "2026-03-31T22:00:00Z");
    // 7,200 s x 10 x 0.5 / 3600 = 10.00; 10,800 s x 10 / 3600 = 30.00
    assert_eq!(
        lines(inv, OnDemand),
        [
            line(0, "0.5", "7200", "10.00"),
            line(0, "1", "10800", "30.00")
        ]
    );
}

#[test]
fn dst_autumn_night_in_berlin_offpeak_window_across_the_change_is_four_real_hours() {
    // 2026-10-25 03:00 CEST -> 02:00 CET. Usage 00:00 CEST (22:00Z) to 06:00 CET (05:00Z):
    // 7 real hours; the window 01:00 CEST (23:00Z) to 04:00 CET (03:00Z) holds 4 of them.
    let rated = rate(
        BERLIN,
        "2026-10",
        &[usage(U {
            start: "2026-10-24T22:00:00Z",
            end: "2026-10-25T05:00:00Z",
            ..U::default()
        })],
    );
    let inv = invoice(&rated, "acme");
    // 14,400 s x 10 x 0.5 / 3600 = 20.00; 10,800 s x 10 / 3600 = 30.00
    assert_eq!(
        lines(inv, OnDemand),
        [
            line(0, "0.5", "14400", "20.00"),
            line(0, "1", "10800", "30.00")
        ]
    );
}

#[test]
fn graduated_tier_boundary_falls_inside_one_seconds_units() {
    // Tier 0 holds 0.5 unit-hours = 1,800 unit-seconds. gpu0 runs alone for 1 s, then 3 GPUs
    // run together: after that first second the total grows by 3 a second, 1 + 3 x 599 =
    // 1,798, so the next second's 3 units split 2 into tier 0 and 1 into tier 1.
    let book = r#"
currency = "CNY"
[skus."gpu.h100"]
tiers = [ { up_to_hours = "0.5", rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
"#;
    let mut events = vec![usage(U {
        id: "g0",
        resource: "gpu0",
        start: "2026-11-03T10:00:00Z",
        end: "2026-11-03T10:20:00Z",
        ..U::default()
    })];
    for (id, r) in [("g1", "gpu1"), ("g2", "gpu2")] {
        events.push(usage(U {
            id,
            resource: r,
            start: "2026-11-03T10:00:01Z",
            end: "2026-11-03T10:20:00Z",
            ..U::default()
        }));
    }
    let rated = rate(book, "2026-11", &events);
    // 1,800 x 24 / 3600 = 12.00; (1,200 + 2 x 1,199 - 1,800) = 1,798 x 20 / 3600 = 9.988.. -> 9.99
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [line(0, "1", "1800", "12.00"), line(1, "1", "1798", "9.99")]
    );
}

#[test]
fn graduated_tiers_walk_in_time_order_so_offpeak_seconds_first_fill_the_cheap_tier() {
    // worked-1's acme overflow: 05:00-06:00 off-peak fills tier 0 at 24 x 0.70 first.
    let book = r#"
currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100"]
tiers = [ { up_to_hours = 1, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"
"#;
    let rated = rate(
        book,
        "2026-11",
        &[usage(U {
            start: "2026-11-02T05:00:00+08:00",
            end: "2026-11-02T07:00:00+08:00",
            ..U::default()
        })],
    );
    // 3,600 x 24 x 0.7 / 3600 = 16.80 in tier 0; 3,600 x 20 / 3600 = 20.00 in tier 1
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [
            line(0, "0.7", "3600", "16.80"),
            line(1, "1", "3600", "20.00")
        ]
    );
}

#[test]
fn volume_tiers_price_every_unit_second_at_the_tier_the_total_reaches() {
    let book = r#"
currency = "CNY"
[skus."gpu.h100"]
tier_mode = "volume"
tiers = [ { up_to_hours = 1, rate_per_hour = "24.00" }, { up_to_hours = 10, rate_per_hour = "21.00" }, { rate_per_hour = "18.00" } ]
"#;
    let one_hour = rate(
        book,
        "2026-11",
        &[usage(U {
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T11:00:00Z",
            ..U::default()
        })],
    );
    // exactly 3,600 unit-seconds: tier 0 still holds it; 24.00
    assert_eq!(
        lines(invoice(&one_hour, "acme"), OnDemand),
        [line(0, "1", "3600", "24.00")]
    );
    let two_hours = rate(
        book,
        "2026-11",
        &[usage(U {
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T12:00:00Z",
            ..U::default()
        })],
    );
    // 7,200 > 3,600: every unit-second at tier 1's 21.00: 42.00 (not 24 + 21 = 45)
    assert_eq!(
        lines(invoice(&two_hours, "acme"), OnDemand),
        [line(1, "1", "7200", "42.00")]
    );
    let eleven = rate(
        book,
        "2026-11",
        &[usage(U {
            start: "2026-11-03T00:00:00Z",
            end: "2026-11-03T11:00:00Z",
            ..U::default()
        })],
    );
    assert_eq!(
        lines(invoice(&eleven, "acme"), OnDemand),
        [line(2, "1", "39600", "198.00")]
    );
}

fn reservation_of_8(gpus_in_use: usize) -> Rated {
    let book = with(
        r#"
[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "8"
from = "2026-11-03T00:00:00+08:00"
to = "2026-11-04T00:00:00+08:00"
rate_per_hour = "15.00"
"#,
    );
    let ids: Vec<String> = (0..gpus_in_use).map(|i| format!("gpu{i}")).collect();
    let events: Vec<String> = ids
        .iter()
        .map(|r| {
            usage(U {
                id: r,
                resource: r,
                start: "2026-11-03T10:00:00+08:00",
                end: "2026-11-03T11:00:00+08:00",
                ..U::default()
            })
        })
        .collect();
    rate(&book, "2026-11", &events).remove(0)
}

#[test]
fn reservation_of_8_gpus_with_10_in_use_bills_2_overflow_on_demand() {
    let rated = reservation_of_8(10);
    let inv = &rated.invoice;
    // commitment: 8 x 86,400 s x 15 / 3600 = 2,880.00
    assert_eq!(
        lines(inv, ReservedCommitment),
        [line(0, "", "691200", "2880.00")]
    );
    assert_eq!(lines(inv, ReservedUsage), [line(0, "", "28800", "0.00")]);
    // overflow: 2 x 3,600 s x 24 / 3600 = 48.00
    assert_eq!(lines(inv, OnDemand), [line(0, "1", "7200", "48.00")]);
    assert_eq!(inv.subtotal, d("2928.00"));
}

#[test]
fn reservation_of_8_gpus_with_5_in_use_still_bills_the_3_unused() {
    let rated = reservation_of_8(5);
    let inv = &rated.invoice;
    assert_eq!(
        lines(inv, ReservedCommitment),
        [line(0, "", "691200", "2880.00")]
    );
    assert_eq!(lines(inv, ReservedUsage), [line(0, "", "18000", "0.00")]);
    assert!(lines(inv, OnDemand).is_empty());
    assert_eq!(inv.subtotal, d("2880.00"));
}

#[test]
fn reservations_of_one_sku_pool_and_each_bills_its_own_commitment_line() {
    let res = |q: &str, rate: &str| {
        format!(
            "[[reservations]]\naccount = \"acme\"\nsku = \"gpu.h100\"\nquantity = \"{q}\"\nfrom = \"2026-11-03T00:00:00+08:00\"\nto = \"2026-11-04T00:00:00+08:00\"\nrate_per_hour = \"{rate}\"\n"
        )
    };
    let book = with(&format!("{}{}", res("2", "15.00"), res("1", "14.00")));
    let events: Vec<String> = (0..4)
        .map(|i| {
            let r = format!("gpu{i}");
            usage(U {
                id: &r.clone(),
                resource: &r,
                start: "2026-11-03T10:00:00+08:00",
                end: "2026-11-03T11:00:00+08:00",
                ..U::default()
            })
        })
        .collect();
    let inv = rate(&book, "2026-11", &events).remove(0).invoice;
    // 2 x 24 h x 15 = 720.00 then 1 x 24 h x 14 = 336.00, in price-book order
    assert_eq!(
        lines(&inv, ReservedCommitment),
        [
            line(0, "", "172800", "720.00"),
            line(0, "", "86400", "336.00")
        ]
    );
    assert_eq!(lines(&inv, ReservedUsage), [line(0, "", "10800", "0.00")]);
    assert_eq!(lines(&inv, OnDemand), [line(0, "1", "3600", "24.00")]);
}

#[test]
fn a_20s_lease_with_a_60s_minimum_owes_40_unit_seconds_at_the_first_tier_rate() {
    let book = r#"
currency = "CNY"
timezone = "Asia/Shanghai"
[skus."gpu.h100"]
minimum_seconds = 60
tiers = [ { up_to_hours = 100, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
[[offpeak]]
from = "00:00"
to = "24:00"
multiplier = "0.50"
"#;
    let rated = rate(
        book,
        "2026-11",
        &[usage(U {
            start: "2026-11-05T12:00:00+08:00",
            end: "2026-11-05T12:00:20+08:00",
            ..U::default()
        })],
    );
    let inv = invoice(&rated, "acme");
    // usage: 20 x 24 x 0.5 / 3600 = 0.0666.. -> 0.07; minimum: 40 x 24 / 3600 (no multiplier) = 0.27
    assert_eq!(lines(inv, OnDemand), [line(0, "0.5", "20", "0.07")]);
    assert_eq!(lines(inv, Minimum), [line(0, "", "40", "0.27")]);
    assert_eq!(inv.subtotal, d("0.34"));
}

#[test]
fn the_minimum_counts_all_events_and_is_billed_in_the_period_of_the_first_second() {
    let book = "currency = \"CNY\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"36.00\"\nminimum_seconds = 60\n";
    // 10 s at the end of November and 10 s at the start of December (UTC).
    let events = [
        usage(U {
            id: "a",
            start: "2026-11-30T23:59:50Z",
            end: "2026-11-30T23:59:59.2Z",
            ..U::default()
        }),
        usage(U {
            id: "b",
            start: "2026-12-01T00:00:00Z",
            end: "2026-12-01T00:00:10Z",
            ..U::default()
        }),
    ];
    let nov = rate(book, "2026-11", &events);
    // covered 20 s in all: owes 40 x 36 / 3600 = 0.40 in November
    assert_eq!(
        lines(invoice(&nov, "acme"), Minimum),
        [line(0, "", "40", "0.40")]
    );
    let dec = rate(book, "2026-12", &events);
    assert!(lines(invoice(&dec, "acme"), Minimum).is_empty());
    assert_eq!(
        lines(invoice(&dec, "acme"), OnDemand),
        [line(0, "1", "10", "0.10")]
    );
}

#[test]
fn egress_150_gb_through_a_100_gb_free_tier_bills_50_gb() {
    let book = with(
        "[egress.internet]\ntiers = [ { up_to_gb = 100, rate_per_gb = \"0.00\" }, { rate_per_gb = \"0.80\" } ]\n",
    );
    let rated = rate(
        &book,
        "2026-11",
        &[
            egress(
                "n1",
                "acme",
                "internet",
                "2026-11-10T10:00:00+08:00",
                100_000_000_000,
            ),
            egress(
                "n2",
                "acme",
                "internet",
                "2026-11-11T10:00:00+08:00",
                50_000_000_000,
            ),
            // October: not in this period.
            egress(
                "n0",
                "acme",
                "internet",
                "2026-10-31T23:59:59+08:00",
                999_000_000_000,
            ),
        ],
    );
    let inv = invoice(&rated, "acme");
    let eg: Vec<_> = inv
        .lines
        .iter()
        .filter(|l| l.component == Egress)
        .map(|l| {
            (
                l.dest.clone().unwrap(),
                l.tier,
                l.quantity.to_string(),
                l.amount.to_string(),
            )
        })
        .collect();
    assert_eq!(
        eg,
        [
            ("internet".into(), 0, "100".into(), "0.00".into()),
            ("internet".into(), 1, "50".into(), "40.00".into())
        ]
    );
}

#[test]
fn spot_ignores_reservations_tiers_and_offpeak() {
    let book = with(
        r#"
[[offpeak]]
from = "00:00"
to = "24:00"
multiplier = "0.10"
[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "8"
from = "2026-11-01T00:00:00+08:00"
to = "2026-11-02T00:00:00+08:00"
rate_per_hour = "1.00"
"#,
    );
    let rated = rate(
        &book,
        "2026-11",
        &[usage(U {
            class: "spot",
            start: "2026-11-01T09:00:00+08:00",
            end: "2026-11-01T11:00:00+08:00",
            ..U::default()
        })],
    );
    let inv = invoice(&rated, "acme");
    // 7,200 s x 9.60 / 3600 = 19.20
    assert_eq!(lines(inv, Spot), [line(0, "", "7200", "19.20")]);
    assert!(lines(inv, ReservedUsage).is_empty());
}

#[test]
fn unpriced_usage_stays_out_of_the_invoice_and_is_reported() {
    let book = "currency = \"CNY\"\n[skus.\"gpu.h100\"]\nrate_per_hour = \"24.00\"\n";
    let rated = rate(
        book,
        "2026-11",
        &[
            usage(U {
                id: "a",
                sku: "gpu.b200",
                start: "2026-11-03T10:00:00Z",
                end: "2026-11-03T11:00:00Z",
                ..U::default()
            }),
            usage(U {
                id: "b",
                class: "spot",
                start: "2026-11-03T10:00:00Z",
                end: "2026-11-03T10:30:00Z",
                ..U::default()
            }),
            egress("c", "acme", "moon", "2026-11-03T10:00:00Z", 5_000_000_000),
        ],
    );
    let r = &rated[0];
    assert!(r.invoice.lines.is_empty());
    assert_eq!(r.invoice.total, d("0.00"));
    let got: Vec<(Option<&str>, Option<&str>, String)> = r
        .unpriced
        .iter()
        .map(|u| (u.sku.as_deref(), u.dest.as_deref(), u.quantity.to_string()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("gpu.b200"), None, "3600".into()),
            (Some("gpu.h100"), None, "1800".into()),
            (None, Some("moon"), "5".into())
        ]
    );
}

#[test]
fn discount_credit_and_tax_apply_in_order_and_round_once() {
    let book = with(
        "[tax]\nrate = \"0.06\"\n[[discounts]]\naccount = \"acme\"\npercent = \"10\"\n[[credits]]\naccount = \"acme\"\namount = \"5.00\"\n",
    );
    // 2.53 h of spot at 9.60/h... choose 2 h 15 min = 8,100 s x 9.60 / 3600 = 21.60
    let rated = rate(
        &book,
        "2026-11",
        &[usage(U {
            class: "spot",
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T12:15:00Z",
            ..U::default()
        })],
    );
    let inv = invoice(&rated, "acme");
    // discount 2.16; credit min(5.00, 19.44) = 5.00; net 14.44; tax 0.8664 -> 0.87; total 15.31
    assert_eq!(
        [inv.subtotal, inv.discount, inv.credit, inv.tax, inv.total].map(|x| x.to_string()),
        ["21.60", "2.16", "5.00", "0.87", "15.31"]
    );
}

#[test]
fn accounts_named_only_by_account_terms_get_a_zero_invoice() {
    let book = with("[[credits]]\naccount = \"ghost\"\namount = \"100\"\n");
    let rated = rate(
        &book,
        "2026-11",
        &[usage(U {
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T10:00:01Z",
            ..U::default()
        })],
    );
    let accounts: Vec<&str> = rated.iter().map(|r| r.invoice.account.as_str()).collect();
    assert_eq!(accounts, ["acme", "ghost"]);
    let ghost = invoice(&rated, "ghost");
    assert!(ghost.lines.is_empty());
    assert_eq!(
        [ghost.subtotal, ghost.credit, ghost.total].map(|x| x.to_string()),
        ["0.00", "0.00", "0.00"]
    );
}

#[test]
fn usage_outside_the_period_is_not_rated_but_names_the_account() {
    let rated = rate(
        BOOK,
        "2026-11",
        &[usage(U {
            account: "late",
            start: "2026-12-03T10:00:00Z",
            end: "2026-12-03T11:00:00Z",
            ..U::default()
        })],
    );
    assert!(invoice(&rated, "late").lines.is_empty());
}

#[test]
fn usage_straddling_the_period_start_is_clipped_to_the_period() {
    // Shanghai November starts 2026-10-31T16:00:00Z. 15:30Z-16:30Z: 30 min inside.
    let rated = rate(
        BOOK,
        "2026-11",
        &[usage(U {
            start: "2026-10-31T15:30:00Z",
            end: "2026-10-31T16:30:00Z",
            ..U::default()
        })],
    );
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [line(0, "1", "1800", "12.00")]
    );
}

#[test]
fn duplicates_change_nothing_and_conflicts_are_rejected_with_the_first_standing() {
    let first = usage(U {
        start: "2026-11-03T10:00:00Z",
        end: "2026-11-03T11:00:00Z",
        ..U::default()
    });
    let other = usage(U {
        start: "2026-11-03T10:00:00Z",
        end: "2026-11-03T12:00:00Z",
        ..U::default()
    });
    let mut m = Meter::new();
    assert_eq!(m.ingest(first.as_bytes()), Admission::Accepted);
    assert_eq!(m.ingest(first.as_bytes()), Admission::Duplicate);
    match m.ingest(other.as_bytes()) {
        Admission::Rejected(r) => assert_eq!(r.reason.as_str(), "conflict"),
        a => panic!("{a:?}"),
    }
    let rated = rate(BOOK, "2026-11", &[first.clone(), first]);
    assert_eq!(
        lines(invoice(&rated, "acme"), OnDemand),
        [line(0, "1", "3600", "24.00")]
    );
}

#[test]
fn partial_seconds_bill_as_whole_seconds() {
    // 12:00:00.9 to 12:00:19.5 touches seconds 0..19: 20 seconds.
    let rated = rate(
        BOOK,
        "2026-11",
        &[usage(U {
            start: "2026-11-05T12:00:00.9Z",
            end: "2026-11-05T12:00:19.5Z",
            ..U::default()
        })],
    );
    assert_eq!(lines(invoice(&rated, "acme"), OnDemand)[0].2, "20");
}

/// Issue 14, finding 16: accepted but absurd magnitudes (rates at the price book's limit, a
/// surcharge multiplier of 100, a fleet at the largest quantity) are refused with an error
/// naming the account, never rated into an overflow or an amount without its 2 decimals.
#[test]
fn absurd_magnitudes_are_a_rating_error_not_a_panic() {
    use billing_core::meter::Meter;
    use billing_core::period::Period;
    use billing_core::pricebook::PriceBook;
    use billing_core::rating::{RatingError, rate_all};
    let book = PriceBook::from_toml(
        r#"
currency = "CNY"
timezone = "UTC"
[skus."gpu.h100"]
rate_per_hour = "1000000000"
[[offpeak]]
from = "00:00"
to = "24:00"
multiplier = "100"
[egress.internet]
tiers = [ { rate_per_gb = "1000000000" } ]
"#,
    )
    .unwrap();
    let period = Period::month("2026-11", book.timezone).unwrap();
    // GPUs x 1 day at quantity 10,000: 2.4e16 each.
    let fleet = |gpus: usize| {
        let mut meter = Meter::new();
        for n in 0..gpus {
            let resource = format!("gpu{n}");
            let id = format!("e{n}");
            let r = U {
                id: &id,
                resource: &resource,
                start: "2026-11-03T00:00:00Z",
                end: "2026-11-04T00:00:00Z",
                quantity: "10000",
                ..U::default()
            }
            .json();
            assert!(!matches!(
                meter.ingest(r.as_bytes()),
                Admission::Rejected(_)
            ));
        }
        meter
    };
    // 50 GPUs: 1.2e18 > 10^18.
    match rate_all(&book, period.clone(), &fleet(50), None) {
        Err(RatingError::AmountTooLarge { account, .. }) => assert_eq!(account, "acme"),
        other => panic!("expected AmountTooLarge, got {other:?}"),
    }
    // 41 GPUs (9.84e17) rate.
    let meter = fleet(41);
    let rated = rate_all(&book, period.clone(), &meter, None).unwrap();
    assert_eq!(rated[0].invoice.total.to_string(), "984000000000000000.00");
    // Egress: u64::MAX bytes at 10^9 per GB is 1.8e19.
    let mut meter = Meter::new();
    let e = egress("x1", "acme", "internet", "2026-11-03T00:00:00Z", u64::MAX);
    assert!(!matches!(
        meter.ingest(e.as_bytes()),
        Admission::Rejected(_)
    ));
    assert!(matches!(
        rate_all(&book, period, &meter, None),
        Err(RatingError::AmountTooLarge { .. })
    ));
}

/// Issue 14, finding 13: a credit with more decimals than the currency's is refused (0.005
/// would round into a credit of 0.01, more than was granted), and `effective_from` is compared
/// to the period's start exactly, fractions of a second included.
#[test]
fn money_terms_have_two_decimals_and_effective_from_compares_exactly() {
    use billing_core::pricebook::PriceBook;
    let e = PriceBook::from_toml(&with(
        "[[credits]]\naccount = \"acme\"\namount = \"0.005\"\n",
    ))
    .unwrap_err();
    assert_eq!(e.key(), "credits[0].amount");
    assert!(e.to_string().contains("money"), "{e}");
    assert!(
        PriceBook::from_toml(&with(
            "[[credits]]\naccount = \"acme\"\namount = \"0.50\"\n"
        ))
        .is_ok()
    );
    let start = 1_793_462_400; // 2026-11-01T00:00:00+08:00
    let late = PriceBook::from_toml(&format!(
        "effective_from = \"2026-11-01T00:00:00.5+08:00\"\n{BOOK}"
    ))
    .unwrap();
    assert!(!late.applies_to_period_starting(start));
    assert!(late.applies_to_period_starting(start + 1));
    let exact = PriceBook::from_toml(&format!(
        "effective_from = \"2026-11-01T00:00:00+08:00\"\n{BOOK}"
    ))
    .unwrap();
    assert!(exact.applies_to_period_starting(start));
}
