//! Part 3 of billing-semantics.md (sections 15 to 21, not 18) with worked numbers, from events
//! to invoice lines.

mod common;

use billing_core::invoice::Component;
use billing_core::pricebook::PriceBook;
use common::*;

/// UTC keeps local times readable.
const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"

[tax]
rate = "0.10"
"#;

fn with(extra: &str) -> String {
    format!("{BOOK}\n{extra}")
}

fn u<'a>(id: &'a str, lease: &'a str, start: &'a str, end: &'a str) -> U<'a> {
    U {
        id,
        lease,
        resource: lease,
        start,
        end,
        ..U::default()
    }
}

// ---- section 20: one-off charges ----------------------------------------------------------

const CHARGE: &str = r#"
[[charges]]
account = "acme"
id = "migration-2026-11"
description = "数据迁移服务"
amount = "800.00"
at = "2026-11-20T00:00:00+08:00"
"#;

#[test]
fn a_charge_bills_once_in_the_period_holding_at() {
    // `at` is 2026-11-19T16:00:00Z: in November (UTC), not in December. 800.00 + 10 % tax.
    let book = with(CHARGE);
    let nov = rate(&book, "2026-11", &[]);
    let inv = invoice(&nov, "acme");
    assert_eq!(inv.lines.len(), 1);
    let l = &inv.lines[0];
    assert_eq!(l.component, Component::Charge);
    assert_eq!(l.charge.as_deref(), Some("migration-2026-11"));
    assert_eq!(l.description.as_deref(), Some("数据迁移服务"));
    assert_eq!(l.sku, None);
    assert_eq!(
        (l.quantity.to_string(), l.amount.to_string()),
        ("1".into(), "800.00".into())
    );
    assert_eq!(totals(inv), ["800.00", "0.00", "0.00", "80.00", "880.00"]);
    let json = serde_json::to_value(l).unwrap();
    assert_eq!(json["unit"], "charge");
    assert_eq!(json["charge"], "migration-2026-11");
    let dec = rate(&book, "2026-12", &[]);
    assert!(invoice(&dec, "acme").lines.is_empty());
}

#[test]
fn charge_lines_sort_by_id_after_lines_with_an_sku() {
    // Section 21: ... subscription, charge; a missing field first. Two charges and an
    // on-demand hour (36.00): charge "a" before charge "b", and `charge` sorts before
    // `on_demand` by the component's name.
    let book = with(
        r#"
[[charges]]
account = "acme"
id = "b"
amount = "1.00"
at = "2026-11-02T00:00:00Z"
[[charges]]
account = "acme"
id = "a"
amount = "2.00"
at = "2026-11-03T00:00:00Z"
"#,
    );
    let events = [u("e1", "l1", "2026-11-01T00:00:00Z", "2026-11-01T01:00:00Z").json()];
    let rated = rate(&book, "2026-11", &events);
    let inv = invoice(&rated, "acme");
    let got: Vec<(String, Option<&str>)> = inv
        .lines
        .iter()
        .map(|l| (l.component.as_str().to_string(), l.charge.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("charge".into(), Some("a")),
            ("charge".into(), Some("b")),
            ("on_demand".into(), None)
        ]
    );
    assert_eq!(inv.subtotal.to_string(), "39.00");
}

#[test]
fn a_charge_must_be_positive_and_its_id_unique_per_account() {
    let zero = with(&CHARGE.replace("800.00", "0"));
    let e = PriceBook::from_toml(&zero).unwrap_err();
    assert_eq!(e.key(), "charges[0].amount", "{e}");
    let twice = with(&format!("{CHARGE}{CHARGE}"));
    let e = PriceBook::from_toml(&twice).unwrap_err();
    assert_eq!(e.key(), "charges[1].id", "{e}");
    let no_id = with(&CHARGE.replace("id = \"migration-2026-11\"\n", ""));
    let e = PriceBook::from_toml(&no_id).unwrap_err();
    assert_eq!(e.key(), "charges[0].id", "{e}");
}

// ---- section 15: billing increments -------------------------------------------------------

const HOURLY: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"
increment_seconds = 3600
tiers = [ { up_to_hours = 1, rate_per_hour = "36.00" }, { rate_per_hour = "18.00" } ]

[[offpeak]]
from = "00:00"
to = "08:00"
multiplier = "0.50"
"#;

#[test]
fn an_hourly_run_crossing_a_month_end_is_padded_in_the_next_month_at_the_first_tier_rate() {
    // increment_seconds = 3600, r = 36.00/h = 0.01/us. A run [Oct 31 23:30, Nov 1 00:20)
    // of 3000 s owes 600 s, billed in November (its last second): 600 x 0.01 = 6.00, with no
    // off-peak multiplier (00:00-08:00 is 0.50) and no tier. October bills its 1800 s of
    // on-demand usage at 0.01 x 1 (23:30 is peak) = 18.00 and no increment.
    let events = [u("e1", "l1", "2026-10-31T23:30:00Z", "2026-11-01T00:20:00Z").json()];
    let oct = rate(HOURLY, "2026-10", &events);
    let inv = invoice(&oct, "acme");
    assert_eq!(lines(inv, Component::Increment), []);
    assert_eq!(
        lines(inv, Component::OnDemand),
        [line(0, "1", "1800", "18.00")]
    );
    let nov = rate(HOURLY, "2026-11", &events);
    let inv = invoice(&nov, "acme");
    assert_eq!(
        lines(inv, Component::Increment),
        [line(0, "", "600", "6.00")]
    );
    // November's own 1200 s are off-peak, tier 0 (a new period): 1200 x 0.01 x 0.5 = 6.00.
    assert_eq!(
        lines(inv, Component::OnDemand),
        [line(0, "0.5", "1200", "6.00")]
    );
    assert_eq!(inv.subtotal.to_string(), "12.00");
    // Both invoices name the home region (`null`): the book uses part 3.
    let json = serde_json::to_value(inv).unwrap();
    assert!(json.as_object().unwrap().contains_key("region"));
    assert_eq!(json["region"], serde_json::Value::Null);
}

#[test]
fn a_late_event_joining_two_runs_moves_the_increment_between_periods() {
    // Before: [Nov 30 23:00, 23:50) (3000 s, owes 600 in November: 6.00) and
    // [Dec 1 00:10, 00:40) (1800 s, owes 1800 in December: 18.00). The late heartbeat
    // [23:50, 00:10) joins them: one run of 6000 s owing 1200 s in December (12.00),
    // November owes none (section 7 adjusts both periods).
    let mut events = vec![
        u("a", "l1", "2026-11-30T23:00:00Z", "2026-11-30T23:50:00Z").json(),
        u("b", "l1", "2026-12-01T00:10:00Z", "2026-12-01T00:40:00Z").json(),
    ];
    let inc = |period: &str, events: &[String]| {
        lines(
            invoice(&rate(HOURLY, period, events), "acme"),
            Component::Increment,
        )
    };
    assert_eq!(inc("2026-11", &events), [line(0, "", "600", "6.00")]);
    assert_eq!(inc("2026-12", &events), [line(0, "", "1800", "18.00")]);
    events.push(u("late", "l1", "2026-11-30T23:50:00Z", "2026-12-01T00:10:00Z").json());
    assert_eq!(inc("2026-11", &events), []);
    assert_eq!(inc("2026-12", &events), [line(0, "", "1200", "12.00")]);
}

#[test]
fn covered_seconds_still_form_runs_and_spot_is_never_padded() {
    // A reservation of 1 unit covers [00:00, 01:00); usage [00:10, 00:15) is all covered
    // (reserved_usage 300) yet its run of 300 s owes 3300 s (33.00) of increment. Spot usage
    // of the same sku is not padded.
    let book = HOURLY.replace(
        "increment_seconds = 3600\n",
        "increment_seconds = 3600\nspot_rate_per_hour = \"3.60\"\n",
    ) + r#"
[[reservations]]
account = "acme"
sku = "gpu.h100"
quantity = "1"
from = "2026-11-20T00:00:00Z"
to = "2026-11-20T01:00:00Z"
rate_per_hour = "6.00"
"#;
    let spot = U {
        class: "spot",
        ..u("s", "l9", "2026-11-21T12:00:00Z", "2026-11-21T12:01:40Z")
    };
    let events = [
        u("e", "l1", "2026-11-20T00:10:00Z", "2026-11-20T00:15:00Z").json(),
        spot.json(),
    ];
    let rated = rate(&book, "2026-11", &events);
    let inv = invoice(&rated, "acme");
    assert_eq!(
        lines(inv, Component::Increment),
        [line(0, "", "3300", "33.00")]
    );
    assert_eq!(
        lines(inv, Component::ReservedUsage),
        [line(0, "", "300", "0.00")]
    );
    assert_eq!(lines(inv, Component::Spot), [line(0, "", "100", "0.10")]);
}

#[test]
fn increment_seconds_is_checked() {
    let book =
        |extra: &str| format!("currency = \"CNY\"\n[skus.g]\nrate_per_hour = \"1\"\n{extra}\n");
    for bad in [
        "increment_seconds = 0",
        "increment_seconds = 86401",
        "increment_seconds = \"60\"",
    ] {
        let e = PriceBook::from_toml(&book(bad)).unwrap_err();
        assert_eq!(e.key(), "skus.g.increment_seconds", "{bad}: {e}");
        assert!(e.to_string().contains("1 to 86400"), "{e}");
    }
    let both = PriceBook::from_toml(&book("increment_seconds = 60\nminimum_seconds = 60"));
    let e = both.unwrap_err();
    assert_eq!(e.key(), "skus.g.increment_seconds");
    assert!(e.to_string().contains("never both"), "{e}");
    assert!(PriceBook::from_toml(&book("increment_seconds = 86400")).is_ok());
    let spot_only =
        "currency = \"CNY\"\n[skus.g]\nspot_rate_per_hour = \"1\"\nincrement_seconds = 60\n";
    let e = PriceBook::from_toml(spot_only).unwrap_err();
    assert!(e.to_string().contains("on-demand rate"), "{e}");
}

// ---- section 16: scoped, dated and capped discounts ---------------------------------------

const TWO_SKUS: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"

[skus."gpu.a100"]
rate_per_hour = "48.00"

[egress.internet]
rate_per_gb = "1.00"

[tax]
rate = "0.10"

[[discounts]]
account = "acme"
percent = "10"

[[discounts]]
account = "acme"
id = "a100-launch"
skus = ["gpu.a100"]
components = ["on_demand"]
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
percent = "50"
cap = "20.00"
"#;

fn two_skus_usage(month: &str) -> Vec<String> {
    let at = |h: u32| format!("{month}-10T{h:02}:00:00Z");
    vec![
        // 2 h of h100: 72.00; 1 h of a100: 48.00; 5 GB of egress: 5.00.
        u(&format!("h-{month}"), "l1", &at(0), &at(2)).json(),
        U {
            sku: "gpu.a100",
            ..u(&format!("a-{month}"), "l2", &at(0), &at(1))
        }
        .json(),
        egress(
            &format!("x-{month}"),
            "acme",
            "internet",
            &at(3),
            5_000_000_000,
        ),
    ]
}

#[test]
fn a_capped_dated_scoped_discount_beside_a_plain_one() {
    // November: subtotal 72.00 + 48.00 + 5.00 = 125.00. Plain 10 %: 12.50. The launch
    // discount matches the a100's on_demand line only (not egress, which has no sku):
    // B = 48.00, 50 % = 24.00, capped at 20.00. discount = 32.50; net 92.50; tax 9.25;
    // total 101.75.
    let nov = rate(TWO_SKUS, "2026-11", &two_skus_usage("2026-11"));
    assert_eq!(
        totals(invoice(&nov, "acme")),
        ["125.00", "32.50", "0.00", "9.25", "101.75"]
    );
    // December does not overlap [Nov 1, Dec 1): only the plain 10 %.
    let dec = rate(TWO_SKUS, "2026-12", &two_skus_usage("2026-12"));
    assert_eq!(
        totals(invoice(&dec, "acme")),
        ["125.00", "12.50", "0.00", "11.25", "123.75"]
    );
    // Without a cap the launch discount takes 24.00: 36.50.
    let uncapped = TWO_SKUS.replace("cap = \"20.00\"\n", "");
    let nov = rate(&uncapped, "2026-11", &two_skus_usage("2026-11"));
    assert_eq!(invoice(&nov, "acme").discount.to_string(), "36.50");
}

#[test]
fn a_discount_without_skus_matches_egress_and_discount_is_at_most_the_subtotal() {
    // components = ["egress"]: B = 5.00, 40 % = 2.00; with the plain 10 % (12.50): 14.50.
    let egress_only = TWO_SKUS.replace(
        "skus = [\"gpu.a100\"]\ncomponents = [\"on_demand\"]",
        "components = [\"egress\"]",
    );
    let egress_only = egress_only.replace("percent = \"50\"", "percent = \"40\"");
    let nov = rate(&egress_only, "2026-11", &two_skus_usage("2026-11"));
    assert_eq!(invoice(&nov, "acme").discount.to_string(), "14.50");
    // 90 % plain (112.50) and 100 % of every on_demand line (120.00): held to 125.00.
    let everything = TWO_SKUS
        .replace("percent = \"10\"", "percent = \"90\"")
        .replace("skus = [\"gpu.a100\"]\n", "")
        .replace("percent = \"50\"\ncap = \"20.00\"\n", "percent = \"100\"\n");
    let nov = rate(&everything, "2026-11", &two_skus_usage("2026-11"));
    assert_eq!(
        totals(invoice(&nov, "acme")),
        ["125.00", "125.00", "0.00", "0.00", "0.00"]
    );
}

#[test]
fn discount_terms_are_checked() {
    let cases = [
        (
            "skus = [\"gpu.a100\"]",
            "skus = [\"gpu.b200\"]",
            "discounts[1].skus[0]",
            "unknown sku",
        ),
        (
            "skus = [\"gpu.a100\"]",
            "skus = []",
            "discounts[1].skus",
            "at least one",
        ),
        (
            "components = [\"on_demand\"]",
            "components = [\"ondemand\"]",
            "discounts[1].components[0]",
            "unknown component",
        ),
        (
            "cap = \"20.00\"",
            "cap = \"20.001\"",
            "discounts[1].cap",
            "at most 2",
        ),
        (
            "percent = \"50\"",
            "percent = \"101\"",
            "discounts[1].percent",
            "must be in",
        ),
        (
            "to = \"2026-12-01T00:00:00Z\"",
            "to = \"2026-10-01T00:00:00Z\"",
            "discounts[1].to",
            "after",
        ),
    ];
    for (from, to, key, message) in cases {
        let text = TWO_SKUS.replacen(from, to, 1);
        assert_ne!(text, TWO_SKUS, "{from}");
        let e = PriceBook::from_toml(&text).expect_err(to);
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains(message), "{e}");
    }
    let twice = format!(
        "{TWO_SKUS}[[discounts]]\naccount = \"acme\"\nid = \"a100-launch\"\npercent = \"1\"\n"
    );
    assert_eq!(
        PriceBook::from_toml(&twice).unwrap_err().key(),
        "discounts[2].id"
    );
    // Percents of scoped discounts do not count towards the plain ones' 100.
    let many = TWO_SKUS.replace("percent = \"10\"", "percent = \"100\"");
    assert!(PriceBook::from_toml(&many).is_ok());
}

// ---- section 17: subscription lifecycle ---------------------------------------------------

const YEARLY: &str = r#"
[[subscriptions]]
account = "acme"
id = "y-h100"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-01-01T00:00:00Z"
cycles = 3
price = "3650.00"
end = "2026-11-11T00:00:00Z"
refund = "prorata"

[[credits]]
account = "acme"
id = "open"
amount = "1000.00"

[[credits]]
account = "acme"
id = "soon"
amount = "100.00"
to = "2026-12-01T00:00:00Z"
"#;

#[test]
fn a_yearly_subscription_ended_prorata_is_refunded_between_an_expiring_and_an_open_credit() {
    use billing_core::credits::CreditPool;
    use billing_core::period::Period;
    use billing_core::rating::rate_periods;
    // Ended 2026-11-11 inside its first cycle (2026 in UTC): 51 of 365 days unused, refund
    // 3650.00 x 51 / 365 = 510.00, quantity 51 x 86,400 = 4,406,400. Usage on Nov 5 (before
    // the end) is covered; 10 h on Nov 20 (after it) is not: 10 x 36.00 = 360.00.
    let book = with(YEARLY);
    let events = [
        u("a", "l1", "2026-11-05T00:00:00Z", "2026-11-05T01:00:00Z").json(),
        u("b", "l1", "2026-11-20T00:00:00Z", "2026-11-20T10:00:00Z").json(),
        u("c", "l1", "2026-12-02T00:00:00Z", "2026-12-03T00:00:00Z").json(),
        u("c2", "l1", "2026-12-03T00:00:00Z", "2026-12-03T16:00:00Z").json(),
    ];
    let meter = meter(&events);
    let pb = PriceBook::from_toml(&book).unwrap();
    let (nov, dec) = (
        Period::month("2026-11", pb.timezone).unwrap(),
        Period::month("2026-12", pb.timezone).unwrap(),
    );
    let rated = rate_periods(&pb, &[nov.clone(), dec.clone()], &meter, "acme").unwrap();
    let inv = &rated[0].invoice;
    assert_eq!(
        lines2(inv, Component::SubscriptionRefund),
        [l2("gpu.h100", "y-h100", "4406400", "0.00")]
    );
    let refund = inv
        .lines
        .iter()
        .find(|l| l.component == Component::SubscriptionRefund)
        .unwrap();
    assert_eq!(refund.refund.unwrap().to_string(), "510.00");
    assert_eq!(
        lines(inv, Component::ReservedUsage),
        [line(0, "", "3600", "0.00")]
    );
    assert_eq!(
        lines(inv, Component::OnDemand),
        [line(0, "1", "36000", "360.00")]
    );
    assert_eq!(lines(inv, Component::Subscription), []);
    // November: balance 100.00 (soon) + 510.00 (refund) + 1000.00 (open); 360.00 drawn.
    assert_eq!(totals(inv), ["360.00", "0.00", "360.00", "0.00", "0.00"]);
    // December: 40 h = 1440.00; "soon" has expired: refund 250.00 left + open 1000.00.
    assert_eq!(
        totals(&rated[1].invoice),
        ["1440.00", "0.00", "1250.00", "19.00", "209.00"]
    );
    // Drawing order (rules 12 and 17): the expiring credit first, then the refund, then the
    // credit without `to`, which November leaves whole.
    let mut pool = CreditPool::for_account(&pb, "acme");
    pool.add_refund(nov.start, "y-h100", d("510.00"));
    assert_eq!(pool.available(&nov), d("1610.00"));
    pool.draw(&nov, d("360.00"));
    let open = pb
        .credit_terms
        .iter()
        .find(|c| c.id.as_deref() == Some("open"))
        .unwrap();
    let soon = pb
        .credit_terms
        .iter()
        .find(|c| c.id.as_deref() == Some("soon"))
        .unwrap();
    assert_eq!(pool.remaining_of(soon.index), Some(d("0.00")));
    assert_eq!(pool.refunds_left(), d("250.00"));
    assert_eq!(pool.remaining_of(open.index), Some(d("1000.00")));
    // `gpubill rate` credits the refund of the rated period only: all 510 in November.
    let nov_alone = rate(&book, "2026-11", &events);
    assert_eq!(invoice(&nov_alone, "acme").credit.to_string(), "360.00");
    let jan = rate(&book, "2027-01", &events);
    assert_eq!(lines(invoice(&jan, "acme"), Component::Subscription), []);
}

#[test]
fn an_auto_renewing_subscription_goes_on_across_a_year_boundary() {
    // Monthly from 2026-11-15 (UTC) at 300.00, no count: a cycle starts in every period,
    // December's (Dec 15 -> Jan 15: 31 days = 2,678,400 us) and January 2027's, and in
    // December 2099, too.
    let book = with(
        r#"
[[subscriptions]]
account = "acme"
id = "m"
sku = "gpu.h100"
quantity = "1"
cycle = "month"
start = "2026-11-15T00:00:00Z"
auto_renew = true
price = "300.00"
"#,
    );
    for (period, quantity) in [
        ("2026-11", "2592000"),
        ("2026-12", "2678400"),
        ("2027-01", "2678400"),
        ("2099-12", "2678400"),
    ] {
        let rated = rate(&book, period, &[]);
        assert_eq!(
            lines2(invoice(&rated, "acme"), Component::Subscription),
            [l2("gpu.h100", "m", quantity, "300.00")],
            "{period}"
        );
    }
    // Exactly one of `cycles` and `auto_renew = true`.
    let both = book.replace("auto_renew = true", "auto_renew = true\ncycles = 2");
    let e = PriceBook::from_toml(&both).unwrap_err();
    assert_eq!(e.key(), "subscriptions[0].cycles", "{e}");
    let neither = book.replace("auto_renew = true", "auto_renew = false");
    let e = PriceBook::from_toml(&neither).unwrap_err();
    assert_eq!(e.key(), "subscriptions[0].cycles", "{e}");
    let bad = book.replace("auto_renew = true", "auto_renew = true\nrefund = \"all\"");
    assert_eq!(
        PriceBook::from_toml(&bad).unwrap_err().key(),
        "subscriptions[0].refund"
    );
}

// ---- section 19: regions, currencies and account timezones -----------------------------

const REGIONS: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"

[tax]
rate = "0.06"

[regions."us-east"]
currency = "USD"
timezone = "America/New_York"

[regions."us-east".skus."gpu.h100"]
rate_per_hour = "3.00"

[[regions."us-east".offpeak]]
from = "00:00"
to = "06:00"
multiplier = "0.50"

[regions."us-east".tax]
rate = "0.10"

[[accounts]]
id = "acme"
timezone = "Europe/Berlin"

[[credits]]
account = "acme"
region = "us-east"
amount = "1.00"

[[charges]]
account = "acme"
id = "setup"
region = "us-east"
amount = "5.00"
at = "2026-10-31T23:30:00Z"
"#;

fn in_region(json: String, region: &str) -> String {
    json.replacen(
        r#""data":{"#,
        &format!(r#""data":{{"region":"{region}","#),
        1,
    )
}

#[test]
fn two_regions_in_two_currencies_with_an_account_timezone_unlike_both() {
    use billing_core::rating::rate_month;
    let events = [
        // Home, acme: November in Berlin is [Oct 31 23:00Z, Nov 30 23:00Z). [22:00, 23:00Z)
        // on Oct 31 is October there (though November in Shanghai); [23:00Z, 00:00Z) is
        // November: 1 h x 24.00 = 24.00, tax 6 % 1.44, total 25.44 CNY.
        u("h0", "l1", "2026-10-31T22:00:00Z", "2026-10-31T23:00:00Z").json(),
        u("h1", "l1", "2026-10-31T23:00:00Z", "2026-11-01T00:00:00Z").json(),
        // us-east, acme: 05:00-07:00Z on Nov 10 is 00:00-02:00 in New York (EST), off-peak
        // there (the region's timezone, not Berlin's 06:00-08:00): 2 h x 3.00 x 0.50 = 3.00.
        in_region(
            u("r1", "l2", "2026-11-10T05:00:00Z", "2026-11-10T07:00:00Z").json(),
            "us-east",
        ),
        // us-east, beta (no timezone of its own: New York's November, from Nov 1 04:00Z
        // (EDT) to Dec 1 05:00Z (EST)): only [04:00, 05:00Z) counts, 00:00-01:00 local,
        // off-peak: 1 h x 3.00 x 0.50 = 1.50; tax 0.15; 1.65 USD.
        in_region(
            U {
                account: "beta",
                ..u("b1", "l3", "2026-11-01T03:00:00Z", "2026-11-01T05:00:00Z")
            }
            .json(),
            "us-east",
        ),
        // A region the book does not name: unpriced, no invoice.
        in_region(
            U {
                account: "beta",
                ..u("b2", "l4", "2026-11-05T00:00:00Z", "2026-11-05T01:00:00Z")
            }
            .json(),
            "eu-west",
        ),
    ];
    let book = PriceBook::from_toml(REGIONS).unwrap();
    let month = rate_month(&book, "2026-11", &meter(&events), None).unwrap();
    let got: Vec<(&str, Option<&str>, &str)> = month
        .rated
        .iter()
        .map(|r| {
            let i = &r.invoice;
            (
                i.account.as_str(),
                i.region.as_ref().unwrap().as_deref(),
                i.currency.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("acme", None, "CNY"),
            ("acme", Some("us-east"), "USD"),
            ("beta", Some("us-east"), "USD")
        ]
    );
    let acme_home = &month.rated[0].invoice;
    assert_eq!(acme_home.period.start, "2026-10-31T23:00:00Z");
    assert_eq!(
        lines(acme_home, Component::OnDemand),
        [line(0, "1", "3600", "24.00")]
    );
    assert_eq!(
        totals(acme_home),
        ["24.00", "0.00", "0.00", "1.44", "25.44"]
    );
    // us-east, acme: 3.00 of usage and the 5.00 charge (Oct 31 23:30Z: November in Berlin,
    // October in New York); the region's credit 1.00; net 7.00; tax 10 % 0.70; 7.70 USD.
    let acme_us = &month.rated[1].invoice;
    assert_eq!(acme_us.period.start, "2026-10-31T23:00:00Z");
    assert_eq!(
        lines(acme_us, Component::OnDemand),
        [line(0, "0.5", "7200", "3.00")]
    );
    assert_eq!(
        lines(acme_us, Component::Charge),
        [line(0, "", "1", "5.00")]
    );
    assert_eq!(totals(acme_us), ["8.00", "0.00", "1.00", "0.70", "7.70"]);
    let beta_us = &month.rated[2].invoice;
    assert_eq!(
        (beta_us.period.start.as_str(), beta_us.period.end.as_str()),
        ("2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z")
    );
    assert_eq!(totals(beta_us), ["1.50", "0.00", "0.00", "0.15", "1.65"]);
    assert_eq!(month.unpriced.len(), 1);
    let u0 = &month.unpriced[0];
    assert_eq!(
        (
            u0.account.as_str(),
            u0.region.as_deref(),
            u0.quantity.to_string()
        ),
        ("beta", Some("eu-west"), "3600".to_string())
    );
    // JSON: home invoices carry `"region": null`, the others their name.
    let json = serde_json::to_value(acme_home).unwrap();
    assert_eq!(json["region"], serde_json::Value::Null);
    assert!(json.as_object().unwrap().contains_key("region"));
    assert_eq!(serde_json::to_value(acme_us).unwrap()["region"], "us-east");
}

#[test]
fn a_region_event_is_a_distinct_usage_key_and_content() {
    // The same heartbeat at home and in a region: two keys, each billed in its region; the
    // same identity with a region added is a conflict (the region is content).
    let home = u("x", "l1", "2026-11-10T05:00:00Z", "2026-11-10T06:00:00Z").json();
    let there = in_region(home.replace("\"id\":\"x\"", "\"id\":\"y\""), "us-east");
    let m = meter(&[home.clone(), there]);
    assert_eq!(m.usage_keys(), 2);
    let mut m2 = billing_core::meter::Meter::new();
    m2.ingest(home.as_bytes());
    let same_id = in_region(home, "us-east");
    assert!(matches!(
        m2.ingest(same_id.as_bytes()),
        billing_core::meter::Admission::Rejected(_)
    ));
}

#[test]
fn regions_and_accounts_are_checked() {
    let cases = [
        (
            "currency = \"USD\"\ntimezone = \"America/New_York\"",
            "timezone = \"America/New_York\"",
            "regions.us-east.currency",
            "required",
        ),
        (
            "currency = \"USD\"\ntimezone = \"America/New_York\"",
            "currency = \"USD\"",
            "regions.us-east.timezone",
            "required",
        ),
        (
            "[regions.\"us-east\".skus.\"gpu.h100\"]\nrate_per_hour = \"3.00\"",
            "[regions.\"us-east\".skus.\"gpu.h100\"]\nrate_per_hour = \"3.0.0\"",
            "regions.us-east.skus.\"gpu.h100\".rate_per_hour",
            "",
        ),
        (
            "region = \"us-east\"\namount = \"1.00\"",
            "region = \"us-west\"\namount = \"1.00\"",
            "credits[0].region",
            "unknown region",
        ),
        (
            "timezone = \"Europe/Berlin\"",
            "timezone = \"Europe/Berlinn\"",
            "accounts[0].timezone",
            "unknown timezone",
        ),
        (
            // Section 18 (since implemented): `pays = "parent"` needs a parent.
            "id = \"acme\"\ntimezone",
            "id = \"acme\"\npays = \"parent\"\ntimezone",
            "accounts[0].pays",
            "no parent",
        ),
    ];
    for (from, to, key, message) in cases {
        let text = REGIONS.replacen(from, to, 1);
        assert_ne!(text, REGIONS, "{from}");
        let e = PriceBook::from_toml(&text).expect_err(to);
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains(message), "{e}");
    }
    // A regional term names the region's skus: an sku only the home region has is unknown.
    let home_only = REGIONS.replace(
        "[regions.\"us-east\".skus.\"gpu.h100\"]",
        "[regions.\"us-east\".skus.\"gpu.a100\"]",
    ) + "[[reservations]]\naccount = \"acme\"\nregion = \"us-east\"\nsku = \"gpu.h100\"\nquantity = \"1\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2026-11-02T00:00:00Z\"\nrate_per_hour = \"1.00\"\n";
    let e = PriceBook::from_toml(&home_only).unwrap_err();
    assert_eq!(e.key(), "reservations[0].sku", "{e}");
    let twice = format!("{REGIONS}[[accounts]]\nid = \"acme\"\n");
    assert_eq!(
        PriceBook::from_toml(&twice).unwrap_err().key(),
        "accounts[1].id"
    );
    // `pays = "self"` with a parent is every account paying for itself: accepted.
    let own = REGIONS.replacen(
        "id = \"acme\"\ntimezone",
        "id = \"acme\"\nparent = \"org\"\npays = \"self\"\ntimezone",
        1,
    );
    assert!(PriceBook::from_toml(&own).is_ok());
}

/// What `GET /v1/balance` shows of a plan (the console's subscription view): a yearly plan
/// from 2026-01-01 (UTC) at 1,200.00 that renews, `refund = "prorata"`, seen on 2026-11-16:
/// cycle 0 `[2026-01-01, 2027-01-01)`, renewing on 2027-01-01; ending it now would refund
/// `round(1200 x 46 / 365, 2)` = 151.23 (46 days of 365 unused). Once ended on 2026-11-16
/// it has no current cycle, no renewal and nothing more to refund; a plan with
/// `refund = "none"` refunds 0; a fixed plan in its last cycle does not renew.
#[test]
fn a_plans_status_shows_its_renewal_and_the_refund_ending_it_would_give() {
    use billing_core::holdings::subscription_statuses;
    let plan = |extra: &str| {
        let book = with(&format!(
            r#"
[[subscriptions]]
account = "acme"
id = "y"
sku = "gpu.h100"
quantity = "1"
cycle = "year"
start = "2026-01-01T00:00:00Z"
price = "1200.00"
{extra}
"#
        ));
        PriceBook::from_toml(&book).unwrap()
    };
    let nov_16 = 1_794_787_200; // 2026-11-16T00:00:00Z
    let renewing = plan("auto_renew = true\nrefund = \"prorata\"");
    let s = &subscription_statuses(&renewing, "acme", nov_16)[0];
    assert_eq!(s.current_cycle, Some(0));
    assert_eq!(s.cycle_start, Some(1_767_225_600)); // 2026-01-01
    assert_eq!(s.cycle_end, Some(1_798_761_600)); // 2027-01-01
    assert_eq!(s.next_cycle_start, Some(1_798_761_600));
    assert!(s.auto_renew);
    assert_eq!(
        (s.refund, s.refund_if_ended_now.to_string().as_str()),
        ("prorata", "151.23")
    );
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["next_cycle_start"], "2027-01-01T00:00:00Z");
    assert_eq!(json["refund_if_ended_now"], "151.23");

    let ended = plan("auto_renew = true\nrefund = \"prorata\"\nend = \"2026-11-16T00:00:00Z\"");
    let s = &subscription_statuses(&ended, "acme", nov_16)[0];
    assert_eq!((s.current_cycle, s.next_cycle_start), (None, None));
    assert_eq!(s.refund_if_ended_now.to_string(), "0");
    assert_eq!(s.end, Some(nov_16));

    let no_refund = plan("auto_renew = true");
    let s = &subscription_statuses(&no_refund, "acme", nov_16)[0];
    assert_eq!(
        (s.refund, s.refund_if_ended_now.to_string().as_str()),
        ("none", "0")
    );

    let one_year = plan("cycles = 1\nrefund = \"prorata\"");
    let s = &subscription_statuses(&one_year, "acme", nov_16)[0];
    assert_eq!((s.current_cycle, s.next_cycle_start), (Some(0), None));
    assert_eq!(s.refund_if_ended_now.to_string(), "151.23");
}
