use super::*;
use crate::common::text::NameError;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn budget(thresholds: &[&str]) -> Budget {
    Budget {
        id: "b1".into(),
        account: "acme".into(),
        scope: BudgetScope::Account("acme".into()),
        amount: d("1000"),
        thresholds: thresholds.iter().map(|t| d(t)).collect(),
        forecast: false,
        action: BudgetAction::Notify,
    }
}

#[test]
fn a_budget_of_50_80_100_is_valid() {
    assert_eq!(budget(&["50", "80", "100"]).validate(), Ok(()));
    let mut b = budget(&["100", "50", "80.5"]);
    b.action = BudgetAction::Stop;
    assert_eq!(b.validate(), Ok(()));
}

#[test]
fn thresholds_out_of_range_name_their_index() {
    let e = budget(&["50", "80", "0"]).validate().unwrap_err();
    assert_eq!(e.to_string(), "thresholds[2]: 0 is out of range (0, 1000]");
    let e = budget(&["1000.01"]).validate().unwrap_err();
    assert_eq!(
        e.to_string(),
        "thresholds[0]: 1000.01 is out of range (0, 1000]"
    );
    let e = budget(&["-5"]).validate().unwrap_err();
    assert_eq!(e.to_string(), "thresholds[0]: -5 is out of range (0, 1000]");
    assert_eq!(budget(&["1000"]).validate(), Ok(()));
}

#[test]
fn thresholds_repeated_empty_too_many_or_too_precise_are_refused() {
    let e = budget(&["50", "80", "80.0"]).validate().unwrap_err();
    assert_eq!(e.to_string(), "thresholds[2]: 80.0 repeats thresholds[1]");
    assert_eq!(budget(&[]).validate(), Err(BudgetError::NoThresholds));
    let many: Vec<String> = (1..=26).map(|i| i.to_string()).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let e = budget(&many).validate().unwrap_err();
    assert_eq!(e.to_string(), "thresholds: 26 are more than 25");
    let e = budget(&["50.125"]).validate().unwrap_err();
    assert_eq!(
        e.to_string(),
        "thresholds[0]: 50.125 has more than 2 decimals"
    );
}

#[test]
fn amount_action_and_names_are_checked() {
    let mut b = budget(&["50"]);
    b.amount = d("0");
    assert_eq!(
        b.validate().unwrap_err().to_string(),
        "amount: 0 must be positive"
    );
    b.amount = d("10.005");
    assert_eq!(
        b.validate().unwrap_err().to_string(),
        "amount: 10.005 has more than 2 decimals"
    );
    b.amount = d("10");
    b.action = BudgetAction::Stop;
    assert_eq!(
        b.validate().unwrap_err().to_string(),
        "action: stop needs a threshold of 100"
    );
    let mut b = budget(&["50"]);
    b.scope = BudgetScope::Tag {
        tag: "project".into(),
        value: String::new(),
    };
    assert_eq!(b.validate(), Ok(()));
    b.scope = BudgetScope::Node(" ".into());
    assert_eq!(
        b.validate(),
        Err(BudgetError::Name {
            field: "scope.node",
            source: NameError::Invisible
        })
    );
    assert_eq!(
        b.validate().unwrap_err().to_string(),
        "scope.node: not a valid name"
    );
}

#[test]
fn forecast_adds_the_burn_rate_over_the_seconds_left() {
    let p = Period::month("2026-11", chrono_tz::UTC).unwrap();
    assert_eq!(p.end - p.start, 2_592_000);
    // Ten days in, 20 days = 1,728,000 s left; one GPU at 1.80 an hour burns 0.0005 a
    // second: 300 + 0.0005 x 1,728,000 = 300 + 864 = 1164.
    let now = p.start + 10 * 86_400;
    assert_eq!(forecast(d("300"), d("0.0005"), &p, now), d("1164"));
    // Before the period the whole month is left; after it, nothing; a negative rate is 0.
    assert_eq!(forecast(d("0"), d("0.0005"), &p, p.start - 99), d("1296"));
    assert_eq!(forecast(d("300"), d("0.0005"), &p, p.end + 5), d("300"));
    assert_eq!(forecast(d("300"), d("-1"), &p, now), d("300"));
}

#[test]
fn hysteresis_is_two_points_or_half_a_small_threshold() {
    let amount = d("1000");
    assert_eq!(cross_line(amount, d("80")), d("800"));
    assert_eq!(resolve_line(amount, d("80")), d("780"));
    assert_eq!(resolve_line(amount, d("100")), d("980"));
    // 3%: min(2, 1.5) = 1.5 points, so 1.5% = 15.
    assert_eq!(resolve_line(amount, d("3")), d("15"));
    assert_eq!(resolve_line(amount, d("250")), d("2480"));
}
