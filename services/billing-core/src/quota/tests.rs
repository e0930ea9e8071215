//! Worked numbers of the quota rules.

use crate::pricing::pricebook::PriceBook;

#[test]
fn prepaid_available_is_the_wallet_less_owed_cost_and_holds() {
    // Wallet 90.00; an invoice still owes 11.66, the open period has cost 5.34 so far and
    // a live hold reserves 3.00: 70.00 can still be spent, 20.00 is used.
    let (wallet, owed, cost, held) = (d("90.00"), d("11.66"), d("5.34"), d("3.00"));
    assert_eq!(super::prepaid_used(owed, cost, held), d("20.00"));
    assert_eq!(
        super::prepaid_available(wallet, owed, cost, held),
        d("70.00")
    );
    // Owing more than the wallet holds: negative.
    assert_eq!(
        super::prepaid_available(d("10.00"), owed, cost, held),
        d("-10.00")
    );
}

#[test]
fn a_prepaid_account_is_limited_by_its_wallet_less_what_it_owes() {
    // Stored prepaid_balance 1000.00 (only turns the rule on), wallet 90.00, invoices
    // still owe 11.66: the limit checked is 90.00 and 11.66 counts against it. With an open
    // period's cost of 5.34 a decision measures 11.66 + 5.34 = 17.00 used of 90.00.
    let q = quotas(r#"{"prepaid_balance":"1000.00","spend_limit":"500.00"}"#);
    let (checked, owed) = against_wallet(&q, d("90.00"), d("11.66"));
    assert_eq!(checked.prepaid_balance, Some(d("90.00")));
    assert_eq!(checked.spend_limit, Some(d("500.00")));
    assert_eq!(owed, d("11.66"));
    assert_eq!(
        measures(&checked, d("5.34"), owed, &BTreeMap::new())[1],
        ("prepaid_balance".to_string(), d("17.00"), d("90.00"))
    );
    // An authorization of 73.01 more does not fit (17.00 + 73.01 > 90.00), 73.00 does.
    let spent = Spent {
        period_cost: d("5.34"),
        owed,
        ..Spent::default()
    };
    assert!(matches!(
        authorize(&checked, &spent, "h100", d("1"), 3600, d("73.01")),
        Verdict::Denied { ref quota, .. } if quota == "prepaid_balance"
    ));
    assert_eq!(
        authorize(&checked, &spent, "h100", d("1"), 3600, d("73.00")),
        Verdict::Allowed { amount: d("73.00") }
    );
    // Not prepaid: nothing owed counts and the quotas stay as they are.
    let q = quotas(r#"{"spend_limit":"500.00"}"#);
    assert_eq!(
        against_wallet(&q, d("90.00"), d("11.66")),
        (q, Decimal::ZERO)
    );
}

use super::*;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

#[test]
fn a_stored_level_reads_back_and_an_unknown_one_is_none() {
    for level in [Level::Ok, Level::Warn, Level::Limit] {
        assert_eq!(Level::parse(level.as_str()), Some(level));
    }
    assert_eq!(Level::parse("critical"), None);
    assert_eq!(Level::parse(""), None);
}

fn quotas(json: &str) -> Quotas {
    serde_json::from_str(json).unwrap()
}

#[test]
fn levels_and_the_decisions_between_them() {
    let w = DEFAULT_WARN_AT;
    assert_eq!(Level::of(d("79.99"), d("100"), w), Level::Ok);
    assert_eq!(Level::of(d("80"), d("100"), w), Level::Warn);
    assert_eq!(Level::of(d("100"), d("100"), w), Level::Limit);
    assert_eq!(Level::Ok.decisions_to(Level::Limit), ["warn", "limit"]);
    assert_eq!(Level::Warn.decisions_to(Level::Limit), ["limit"]);
    assert_eq!(Level::Limit.decisions_to(Level::Warn), ["warn"]);
    assert_eq!(Level::Limit.decisions_to(Level::Ok), ["clear"]);
    assert!(Level::Warn.decisions_to(Level::Warn).is_empty());
}

#[test]
fn measures_of_a_period() {
    let q =
        quotas(r#"{"spend_limit":"500.00","prepaid_balance":"1000.00","gpu_hours":{"h100":"10"}}"#);
    let secs = BTreeMap::from([("h100".to_string(), d("18000"))]);
    let m = measures(&q, d("120.50"), d("300.00"), &secs);
    assert_eq!(
        m,
        vec![
            ("spend_limit".to_string(), d("120.50"), d("500.00")),
            ("prepaid_balance".to_string(), d("420.50"), d("1000.00")),
            ("gpu_hours.h100".to_string(), d("5"), d("10")),
        ]
    );
}

#[test]
fn gpu_hours_count_on_demand_reserved_and_spot_seconds() {
    // h100: 7200 on-demand + 3600 reserved + 1800 spot = 12 600 unit-seconds (3.5 h); the
    // 3600 a package covered and a minimum's 60 do not count; a100: 900 on demand.
    let line = |c, sku, secs: &str| Line::usage(c, sku, 0, d(secs), d("0"));
    let lines = [
        line(Component::OnDemand, "h100", "7200"),
        line(Component::ReservedUsage, "h100", "3600"),
        line(Component::Spot, "h100", "1800"),
        line(Component::PackageUsage, "h100", "3600"),
        line(Component::Minimum, "h100", "60"),
        line(Component::OnDemand, "a100", "900"),
    ];
    let secs = unit_seconds(&lines);
    assert_eq!(
        secs,
        BTreeMap::from([("a100".into(), d("900")), ("h100".into(), d("12600"))])
    );
    let q = quotas(r#"{"gpu_hours":{"h100":"10"}}"#);
    assert_eq!(
        measures(&q, d("0"), d("0"), &secs),
        vec![("gpu_hours.h100".to_string(), d("3.5"), d("10"))]
    );
}

#[test]
fn running_means_a_last_run_ending_within_the_window() {
    // Now is 10_000 s: the cutoff is 10_000 - 120 = 9_880. A run ending at 9_881 (119 s
    // ago) runs; one ending at 9_880 (exactly 120 s ago) or earlier does not.
    assert_eq!(running_since(10_000), 9_880);
    assert!(is_running(9_881, 10_000));
    assert!(is_running(10_000, 10_000));
    assert!(!is_running(9_880, 10_000));
    assert!(!is_running(9_000, 10_000));
}

#[test]
fn a_hold_reserves_at_the_first_on_demand_tier() {
    // Tiers 24.00/h for the first 2 h then 20.00/h, spot 9.60/h: a hold reserves 24.00/h
    // (1 unit for 1 h: 24.00); a plain sku its rate; a spot-only or unknown sku none.
    let book = PriceBook::from_toml(
        r#"
currency = "CNY"
[skus."gpu.h100"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"
tiers = [ { up_to_hours = 2, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]
[skus."storage.ssd"]
rate_per_hour = "0.0002"
[skus."gpu.spot-only"]
spot_rate_per_hour = "5.00"
"#,
    )
    .unwrap();
    let rate = hold_rate(&book, "gpu.h100").unwrap();
    assert_eq!(rate, d("24.00"));
    assert_eq!(hold_amount(d("1"), 3600, rate).to_string(), "24.00");
    assert_eq!(hold_rate(&book, "storage.ssd"), Some(d("0.0002")));
    assert_eq!(hold_rate(&book, "gpu.spot-only"), None);
    assert_eq!(hold_rate(&book, "gpu.a100"), None);
}

#[test]
fn hold_ttls_default_to_five_minutes_and_stop_at_a_day() {
    // No ttl: 300 s = 300_000 ms; 60 s = 60_000 ms; 86_400 s (a day) is the longest;
    // 0, -1 and 86_401 s are refused with the value asked for.
    assert_eq!(hold_ttl_ms(None), Ok(300_000));
    assert_eq!(hold_ttl_ms(Some(60)), Ok(60_000));
    assert_eq!(hold_ttl_ms(Some(1)), Ok(1_000));
    assert_eq!(hold_ttl_ms(Some(86_400)), Ok(86_400_000));
    assert_eq!(hold_ttl_ms(Some(0)), Err(TtlOutOfRange(0)));
    assert_eq!(hold_ttl_ms(Some(-1)), Err(TtlOutOfRange(-1)));
    assert_eq!(hold_ttl_ms(Some(86_401)), Err(TtlOutOfRange(86_401)));
}

#[test]
fn hold_sizes_stop_at_a_million_units_and_thirty_days() {
    // 0.5 unit for 1 s and 1 000 000 units for 30 days (2 592 000 s) are taken; 0 or -1
    // units, 1 000 000.01 units, 0 s and 2 592 001 s are refused, naming the value.
    assert_eq!(MAX_HOLD_SECONDS, 2_592_000);
    assert_eq!(check_hold_size(d("0.5"), 1), Ok(()));
    assert_eq!(check_hold_size(d("1000000"), 2_592_000), Ok(()));
    assert_eq!(
        check_hold_size(d("0"), 60),
        Err("quantity = 0: must be above 0 and at most 1000000 units".into())
    );
    assert!(check_hold_size(d("-1"), 60).is_err());
    assert_eq!(
        check_hold_size(d("1000000.01"), 60),
        Err("quantity = 1000000.01: must be above 0 and at most 1000000 units".into())
    );
    assert_eq!(
        check_hold_size(d("1"), 0),
        Err("seconds = 0: must be 1 to 2592000 (30 days)".into())
    );
    assert_eq!(
        check_hold_size(d("1"), 2_592_001),
        Err("seconds = 2592001: must be 1 to 2592000 (30 days)".into())
    );
}

#[test]
fn holds_round_up_to_the_cent() {
    // 1 unit for 1 s at 24.00/h = 0.00666.. -> 0.01; 2 units for 60 s at 36/h = 1.20.
    assert_eq!(hold_amount(d("1"), 1, d("24.00")).to_string(), "0.01");
    assert_eq!(hold_amount(d("2"), 60, d("36")).to_string(), "1.20");
    assert_eq!(hold_amount(d("1"), 60, d("0")).to_string(), "0.00");
}

#[test]
fn a_hold_counts_its_amount_units_and_unit_seconds() {
    // 2 h100 for 1800 s holding 24.00 and 1 h100 for 600 s holding 4.00: 3 units,
    // 2 x 1800 + 600 = 4200 unit-seconds; 0.5 a100 for 60 s holding 0.50: 30
    // unit-seconds; 24.00 + 4.00 + 0.50 = 28.50 held in all.
    let mut spent = Spent::default();
    spent.add_hold("h100", d("2"), 1800, d("24.00"));
    spent.add_hold("h100", d("1"), 600, d("4.00"));
    spent.add_hold("a100", d("0.5"), 60, d("0.50"));
    assert_eq!(spent.held, d("28.50"));
    assert_eq!(spent.held_per_sku["h100"], (d("3"), d("4200")));
    assert_eq!(spent.held_per_sku["a100"], (d("0.5"), d("30")));
}

#[test]
fn authorizations_check_each_quota_with_live_holds() {
    let q =
        quotas(r#"{"spend_limit":"10.00","max_concurrent":{"h100":"8"},"gpu_hours":{"h100":"2"}}"#);
    let mut spent = Spent {
        period_cost: d("8.00"),
        held: d("1.00"),
        ..Spent::default()
    };
    // 0.50 more fits (9.50 <= 10.00); 1.20 does not.
    assert_eq!(
        authorize(&q, &spent, "h100", d("1"), 50, d("36")),
        Verdict::Allowed { amount: d("0.50") }
    );
    assert_eq!(
        authorize(&q, &spent, "h100", d("2"), 60, d("36")),
        Verdict::Denied {
            quota: "spend_limit".into(),
            used: d("9.00"),
            requested: d("1.20"),
            limit: d("10.00")
        }
    );
    spent.period_cost = d("0");
    spent.running.insert("h100".into(), d("6"));
    spent
        .held_per_sku
        .insert("h100".into(), (d("1"), d("3600")));
    assert!(matches!(
        authorize(&q, &spent, "h100", d("2"), 1, d("36")),
        Verdict::Denied { ref quota, .. } if quota == "max_concurrent.h100"
    ));
    // 1 h held + 1.5 h asked > 2 h.
    assert!(matches!(
        authorize(&q, &spent, "h100", d("1"), 5400, d("0")),
        Verdict::Denied { ref quota, .. } if quota == "gpu_hours.h100"
    ));
    assert!(matches!(
        authorize(&q, &spent, "h100", d("1"), 3600, d("0")),
        Verdict::Allowed { .. }
    ));
}
