//! Price book parsing: the documented example and errors naming key and value.

use super::*;
use rust_decimal::Decimal;

const BASE: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100-80g"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"
minimum_seconds = 60
tier_mode = "graduated"
tiers = [
  { up_to_hours = 100,  rate_per_hour = "24.00" },
  { up_to_hours = 1000, rate_per_hour = "21.00" },
  { rate_per_hour = "18.00" },
]

[[offpeak]]
from = "00:00"
to = "08:00"
days = ["mon","tue","wed","thu","fri","sat","sun"]
multiplier = "0.70"
skus = ["gpu.h100-80g"]

[egress.internet]
tiers = [ { up_to_gb = 100, rate_per_gb = "0.00" }, { rate_per_gb = "0.50" } ]

[tax]
rate = "0.06"

[[reservations]]
account = "acme"
sku = "gpu.h100-80g"
quantity = "8"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
rate_per_hour = "15.00"

[[discounts]]
account = "acme"
percent = "30"

[[credits]]
account = "acme"
amount = "500.00"
"#;

fn err(patch: (&str, &str)) -> PriceBookError {
    let text = BASE.replacen(patch.0, patch.1, 1);
    assert_ne!(text, BASE, "patch {:?} did not apply", patch.0);
    PriceBook::from_toml(&text).expect_err(patch.1)
}

#[test]
fn parses_the_documented_example() {
    let pb = PriceBook::from_toml(BASE).unwrap();
    assert_eq!(pb.currency, "CNY");
    assert_eq!(pb.timezone, chrono_tz::Asia::Shanghai);
    let sku = &pb.skus["gpu.h100-80g"];
    assert_eq!(sku.tiers.len(), 3);
    assert_eq!(sku.tiers[1].up_to, Some(Decimal::from(3_600_000)));
    assert_eq!(sku.minimum_seconds, Some(60));
    assert_eq!(pb.offpeak[0].to_seconds, 8 * 3600);
    assert_eq!(pb.reservations[0].to - pb.reservations[0].from, 30 * 86_400);
    assert_eq!(pb.discount_percent("acme"), Decimal::from(30));
    assert_eq!(pb.credit_total("acme"), Decimal::from(500));
    assert_eq!(pb.accounts().into_iter().collect::<Vec<_>>(), vec!["acme"]);
}

#[test]
fn errors_name_the_offending_key_and_value() {
    let cases = [
        (
            ("skus = [\"gpu.h100-80g\"]", "skus = [\"gpu.a100\"]"),
            "offpeak[0].skus[0]",
            "unknown sku",
        ),
        (
            ("up_to_hours = 1000", "up_to_hours = 50"),
            "skus.\"gpu.h100-80g\".tiers[1].up_to_hours",
            "must increase",
        ),
        (
            ("Asia/Shanghai", "Asia/Atlantis"),
            "timezone",
            "unknown timezone",
        ),
        (
            (
                "rate_per_hour = \"24.00\"\nspot",
                "rate_per_hour = \"-1\"\nspot",
            ),
            "skus.\"gpu.h100-80g\".rate_per_hour",
            "must be in",
        ),
        (
            ("to = \"08:00\"", "to = \"00:00\""),
            "offpeak[0].to",
            "must differ",
        ),
        (
            ("up_to_hours = 100,", "up_to_hours = 100.5,"),
            "skus.\"gpu.h100-80g\".tiers[0].up_to_hours",
            "floats are not accepted",
        ),
        (
            ("multiplier = \"0.70\"", "multiplier = \"lots\""),
            "offpeak[0].multiplier",
            "not a decimal",
        ),
        (
            ("days = [\"mon\"", "days = [\"monday\""),
            "offpeak[0].days[0]",
            "one of mon",
        ),
        (
            ("sku = \"gpu.h100-80g\"", "sku = \"gpu.b200\""),
            "reservations[0].sku",
            "unknown sku",
        ),
        (
            (
                "to = \"2026-12-01T00:00:00+08:00\"",
                "to = \"2026-10-01T00:00:00+08:00\"",
            ),
            "reservations[0].to",
            "after",
        ),
        (
            ("percent = \"30\"", "percent = \"130\""),
            "discounts[0].percent",
            "must be in",
        ),
        (
            ("rate = \"0.06\"", "rat = \"0.06\""),
            "tax.rat",
            "unknown key",
        ),
        (
            ("tier_mode = \"graduated\"", "tier_mode = \"stepped\""),
            "skus.\"gpu.h100-80g\".tier_mode",
            "graduated",
        ),
        (
            ("from = \"00:00\"", "from = \"25:00\""),
            "offpeak[0].from",
            "time of day",
        ),
        (
            ("minimum_seconds = 60", "minimum_seconds = -5"),
            "skus.\"gpu.h100-80g\".minimum_seconds",
            "whole number",
        ),
        (
            ("{ up_to_gb = 100,", "{ up_to_gb = -100,"),
            "egress.internet.tiers[0].up_to_gb",
            "positive",
        ),
        (("currency = \"CNY\"\n", "\n"), "currency", "required"),
    ];
    for ((from, to), key, message) in cases {
        let e = err((from, to));
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains(message), "{e}");
    }
}

#[test]
fn invalid_toml_is_a_syntax_error() {
    assert!(matches!(
        PriceBook::from_toml("currency = "),
        Err(PriceBookError::Syntax(_))
    ));
}

#[test]
fn a_middle_tier_without_bound_is_an_error() {
    let e = err((
        "{ up_to_hours = 1000, rate_per_hour = \"21.00\" }",
        "{ rate_per_hour = \"21.00\" }",
    ));
    assert_eq!(e.key(), "skus.\"gpu.h100-80g\".tiers[1].up_to_hours");
}

#[test]
fn midnight_to_midnight_and_24_00() {
    let pb = PriceBook::from_toml(&BASE.replacen("to = \"08:00\"", "to = \"24:00\"", 1)).unwrap();
    assert_eq!(pb.offpeak[0].to_seconds, 86_400);
}

const PART2: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100"]
rate_per_hour = "24.00"
state_rates = { stopped = "0", host_down = "0" }

[sla]
compensation_multiplier = "5"

[[packages]]
account = "acme"
id = "pk-1"
sku = "gpu.h100"
hours = "100"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
price = "1500.00"

[[subscriptions]]
account = "acme"
id = "sub-1"
sku = "gpu.h100"
quantity = "8"
cycle = "month"
start = "2026-11-05T00:00:00+08:00"
cycles = 3
price = "30000.00"

[[credits]]
account = "acme"
id = "v-1"
amount = "100.00"
from = "2026-11-01T00:00:00+08:00"
to = "2026-12-01T00:00:00+08:00"
"#;

#[test]
fn parses_the_part_2_keys() {
    let pb = PriceBook::from_toml(PART2).unwrap();
    let sku = &pb.skus["gpu.h100"];
    assert_eq!(
        sku.state_rates
            .keys()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
        ["stopped", "host_down"]
    );
    assert_eq!(pb.sla.compensation_multiplier, Some(Decimal::from(5)));
    assert_eq!(pb.sla.attach_seconds, 300);
    assert_eq!(pb.packages[0].unit_seconds, Decimal::from(360_000));
    assert_eq!(pb.subscriptions[0].cycle, Cycle::Month);
    assert_eq!(pb.subscriptions[0].cycles, 3);
    assert_eq!(pb.credit_terms[0].id.as_deref(), Some("v-1"));
    assert_eq!(pb.credit_total("acme"), Decimal::from(100));
    let nov = crate::pricing::period::Period::month("2026-11", pb.timezone).unwrap();
    let dec = crate::pricing::period::Period::month("2026-12", pb.timezone).unwrap();
    assert_eq!(
        pb.credit_total_for("acme", nov.start, nov.end),
        Decimal::from(100)
    );
    assert_eq!(
        pb.credit_total_for("acme", dec.start, dec.end),
        Decimal::ZERO
    );
}

#[test]
fn instants_of_account_terms_are_floored_to_whole_seconds() {
    // Part 3: a subscription starting at 2026-11-05T00:00:00.5+08:00 starts at
    // 2026-11-04T16:00:00Z = 1_793_808_000 s; a package's `to` at .999 floors to 2026-11-30T16:00:00Z.
    let book = PART2
        .replace(
            "start = \"2026-11-05T00:00:00+08:00\"",
            "start = \"2026-11-05T00:00:00.5+08:00\"",
        )
        .replace(
            "to = \"2026-12-01T00:00:00+08:00\"\nprice",
            "to = \"2026-12-01T00:00:00.999+08:00\"\nprice",
        );
    let pb = PriceBook::from_toml(&book).unwrap();
    assert_eq!(pb.subscriptions[0].start, 1_793_808_000);
    assert_eq!(pb.packages[0].to, 1_796_054_400);
}

#[test]
fn part_2_errors_name_the_offending_key_and_value() {
    let cases = [
        (
            ("stopped = \"0\"", "paused = \"0\""),
            "skus.\"gpu.h100\".state_rates.paused",
            "unknown lease state",
        ),
        (
            ("host_down = \"0\"", "host_down = \"-1\""),
            "skus.\"gpu.h100\".state_rates.host_down",
            "must be in",
        ),
        (
            (
                "compensation_multiplier = \"5\"",
                "compensation_multiplier = 5.0",
            ),
            "sla.compensation_multiplier",
            "floats are not accepted",
        ),
        (
            ("compensation_multiplier = \"5\"", "attach_seconds = 0"),
            "sla.attach_seconds",
            "whole number",
        ),
        (
            ("price = \"1500.00\"", "price = \"1500.001\""),
            "packages[0].price",
            "at most 2",
        ),
        (
            ("hours = \"100\"", "hours = \"0\""),
            "packages[0].hours",
            "must be in",
        ),
        (("id = \"pk-1\"\n", "\n"), "packages[0].id", "required"),
        (
            (
                "to = \"2026-12-01T00:00:00+08:00\"\nprice",
                "to = \"2026-10-01T00:00:00+08:00\"\nprice",
            ),
            "packages[0].to",
            "after",
        ),
        (
            ("sku = \"gpu.h100\"\nhours", "sku = \"gpu.b200\"\nhours"),
            "packages[0].sku",
            "unknown sku",
        ),
        (
            ("cycle = \"month\"", "cycle = \"monthly\""),
            "subscriptions[0].cycle",
            "\"week\" or \"month\"",
        ),
        (
            ("cycles = 3", "cycles = 0"),
            "subscriptions[0].cycles",
            "from 1 to",
        ),
        (
            ("id = \"sub-1\"", "id = \"pk-1\"\nfoo = 1"),
            "subscriptions[0].foo",
            "unknown key",
        ),
        (
            ("amount = \"100.00\"", "amount = \"100.005\""),
            "credits[0].amount",
            "at most 2",
        ),
        (
            (
                "id = \"v-1\"\namount = \"100.00\"\nfrom = \"2026-11-01T00:00:00+08:00\"",
                "id = \"v-1\"\namount = \"100.00\"\nfrom = \"2026-12-01T00:00:00+08:00\"",
            ),
            "credits[0].to",
            "after",
        ),
    ];
    for ((from, to), key, message) in cases {
        let text = PART2.replacen(from, to, 1);
        assert_ne!(text, PART2, "patch {from:?} did not apply");
        let e = PriceBook::from_toml(&text).expect_err(to);
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains(message), "{e}");
    }
}

#[test]
fn term_ids_are_unique_per_account() {
    let twice = PART2.to_string()
        + "[[packages]]\naccount = \"acme\"\nid = \"pk-1\"\nsku = \"gpu.h100\"\nhours = \"1\"\nfrom = \"2026-11-01T00:00:00Z\"\nto = \"2026-11-02T00:00:00Z\"\nprice = \"0\"\n";
    let e = PriceBook::from_toml(&twice).unwrap_err();
    assert_eq!(e.key(), "packages[1].id");
    let other = twice.replacen(
        "account = \"acme\"\nid = \"pk-1\"\nsku = \"gpu.h100\"\nhours = \"1\"",
        "account = \"beta\"\nid = \"pk-1\"\nsku = \"gpu.h100\"\nhours = \"1\"",
        1,
    );
    assert!(PriceBook::from_toml(&other).is_ok());
}
