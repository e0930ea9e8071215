use super::*;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn run(alert: &BalanceAlert, st: &mut BalanceState, steps: &[(&str, &str)]) -> Vec<Vec<String>> {
    steps
        .iter()
        .enumerate()
        .map(|(i, &(balance, burn))| {
            let obs = BalanceObservation {
                balance: d(balance),
                burn_rate_per_second: d(burn),
                now: 1_793_000_000 + i as i64,
            };
            let (next, ns) = evaluate("acme", alert, st, &obs);
            *st = next;
            ns.into_iter().map(|n| n.key).collect()
        })
        .collect()
}

#[test]
fn low_by_amount_below_100_resolves_only_at_110() {
    let alert = BalanceAlert {
        low_amount: Some(d("100")),
        low_hours: None,
    };
    let mut st = BalanceState::default();
    let out = run(
        &alert,
        &mut st,
        &[
            ("150", "0"),
            ("99.99", "0"),
            ("105", "0"),
            ("98", "0"),
            ("110", "0"),
            ("99", "0"),
        ],
    );
    let none: Vec<String> = Vec::new();
    assert_eq!(out[0], none);
    assert_eq!(out[1], ["balance:acme:amount:low#1"]);
    assert_eq!(out[2], none, "105 is inside the 10% hysteresis");
    assert_eq!(out[3], none);
    assert_eq!(out[4], ["balance:acme:amount:resolved#1"]);
    assert_eq!(out[5], ["balance:acme:amount:low#2"]);
}

#[test]
fn hours_left_is_the_balance_over_the_hourly_burn() {
    // 36.00 an hour = 0.01 a second: 50 / 36 = 1.388.. hours.
    let h = hours_left(d("50"), d("0.01")).unwrap();
    assert_eq!(h.round_dp(4), d("1.3889"));
    assert_eq!(hours_message(h), "余额可用约 1.3 小时");
    assert_eq!(hours_message(d("12")), "余额可用约 12 小时");
    assert_eq!(hours_left(d("50"), d("0")), None);
    assert_eq!(hours_left(d("-3"), d("0")), Some(Decimal::ZERO));
}

#[test]
fn low_by_hours_holds_while_nothing_runs_and_resolves_after_a_top_up() {
    let alert = BalanceAlert {
        low_amount: None,
        low_hours: Some(d("2")),
    };
    let mut st = BalanceState::default();
    // 50 at 36/h: 1.39 h < 2, low. Instances stopped: no news. 79 at 36/h: 2.19 h, under
    // 2.2 (2 x 1.1): still low. Top-up to 80: 2.22 h, resolved.
    let out = run(
        &alert,
        &mut st,
        &[("50", "0.01"), ("50", "0"), ("79", "0.01"), ("80", "0.01")],
    );
    assert_eq!(out[0], ["balance:acme:hours:low#1"]);
    assert!(out[1].is_empty() && out[2].is_empty());
    assert_eq!(out[3], ["balance:acme:hours:resolved#1"]);
    let obs = BalanceObservation {
        balance: d("50"),
        burn_rate_per_second: d("0.01"),
        now: 1_793_000_000,
    };
    let (_, ns) = evaluate("acme", &alert, &BalanceState::default(), &obs);
    assert_eq!(ns[0].payload["hours_left"], "1.3");
    assert_eq!(ns[0].payload["message"], "余额可用约 1.3 小时");
    assert_eq!(ns[0].payload["burn_rate_per_hour"], "36.00");
}

#[test]
fn both_conditions_at_once_are_amount_first_and_resolve_before_going_low() {
    let alert = BalanceAlert {
        low_amount: Some(d("100")),
        low_hours: Some(d("2")),
    };
    let mut st = BalanceState::default();
    // 20 at 36/h: under 100 and 0.56 h. A top-up to 1000: both resolve. Then the amount
    // line alone moves above the balance: the hours stay clear (27.8 h).
    let out = run(&alert, &mut st, &[("20", "0.01"), ("1000", "0.01")]);
    assert_eq!(
        out[0],
        ["balance:acme:amount:low#1", "balance:acme:hours:low#1"]
    );
    assert_eq!(
        out[1],
        [
            "balance:acme:amount:resolved#1",
            "balance:acme:hours:resolved#1"
        ]
    );
    let alert = BalanceAlert {
        low_amount: Some(d("2000")),
        low_hours: Some(d("2")),
    };
    assert_eq!(
        run(&alert, &mut st, &[("1000", "0.01")])[0],
        ["balance:acme:amount:low#2"]
    );
}

#[test]
fn a_negative_balance_is_zero_hours_left_even_with_nothing_running() {
    let alert = BalanceAlert {
        low_amount: None,
        low_hours: Some(d("1")),
    };
    let mut st = BalanceState::default();
    assert_eq!(
        run(&alert, &mut st, &[("-0.01", "0")])[0],
        ["balance:acme:hours:low#1"]
    );
}

#[test]
fn a_condition_taken_off_while_low_resolves() {
    let mut alert = BalanceAlert {
        low_amount: Some(d("100")),
        low_hours: None,
    };
    let mut st = BalanceState::default();
    run(&alert, &mut st, &[("50", "0")]);
    alert.low_amount = None;
    assert_eq!(
        run(&alert, &mut st, &[("50", "0"), ("50", "0")]),
        [vec!["balance:acme:amount:resolved#1".to_string()], vec![]]
    );
}

#[test]
fn settings_out_of_range_name_the_field() {
    let bad = BalanceAlert {
        low_amount: Some(d("0.001")),
        low_hours: None,
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "low_amount: 0.001 must be positive with at most 2 decimals"
    );
    let bad = BalanceAlert {
        low_amount: None,
        low_hours: Some(d("0")),
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "low_hours: 0 is out of range (0, 8784]"
    );
    assert_eq!(BalanceAlert::default().validate(), Ok(()));
}
