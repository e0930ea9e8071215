use super::*;
use crate::notify::budget::BudgetScope;
use crate::pricing::period::Period;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn nov() -> Period {
    Period::month("2026-11", chrono_tz::UTC).unwrap()
}

fn budget(action: BudgetAction, forecast: bool) -> Budget {
    Budget {
        id: "b1".into(),
        account: "acme".into(),
        scope: BudgetScope::Account("acme".into()),
        amount: d("1000"),
        thresholds: vec![d("50"), d("80"), d("100")],
        forecast,
        action,
    }
}

/// Runs the observations `(cost, burn, now)` in `period`, returning each step's notice keys.
fn run(
    b: &Budget,
    state: &mut BudgetState,
    period: &Period,
    steps: &[(&str, &str, i64)],
) -> Vec<Vec<Notice>> {
    steps
        .iter()
        .map(|&(cost, burn, now)| {
            let obs = BudgetObservation {
                period,
                cost: d(cost),
                burn_rate_per_second: d(burn),
                now,
            };
            let e = evaluate(b, state, &obs);
            *state = e.state;
            e.notices
        })
        .collect()
}

fn keys(ns: &[Notice]) -> Vec<&str> {
    ns.iter().map(|n| n.key.as_str()).collect()
}

#[test]
fn cost_400_510_790_820_1005_crosses_50_80_100_once_each_and_limits_at_100() {
    let (b, p) = (budget(BudgetAction::Stop, false), nov());
    let mut st = BudgetState::default();
    let t = p.start + 86_400;
    let steps = [
        ("400", "0", t),
        ("510", "0", t + 1),
        ("790", "0", t + 2),
        ("820", "0", t + 3),
        ("1005", "0", t + 4),
        ("1005", "0", t + 5),
    ];
    let out = run(&b, &mut st, &p, &steps);
    assert!(out[0].is_empty());
    assert_eq!(keys(&out[1]), ["budget:b1:2026-11:50:actual:crossed#1"]);
    assert!(out[2].is_empty(), "790 is under 800");
    assert_eq!(keys(&out[3]), ["budget:b1:2026-11:80:actual:crossed#1"]);
    assert_eq!(keys(&out[4]), ["budget:b1:2026-11:100:actual:crossed#1"]);
    assert!(out[5].is_empty());
    let limit = out[4][0].decision.as_ref().unwrap();
    assert_eq!(
        (limit.quota.as_str(), limit.kind),
        ("budget:b1", DecisionKind::Limit)
    );
    assert!(out[1][0].decision.is_none() && out[3][0].decision.is_none());
    let p4 = &out[4][0].payload;
    assert_eq!(p4["cost"], "1005.00");
    assert_eq!(p4["threshold_amount"], "1000.00");
    assert_eq!(p4["decision"], "limit");
    assert!(st.limited);
}

#[test]
fn a_credit_inside_the_hysteresis_does_not_flap_and_below_it_resolves_and_clears() {
    let (b, p) = (budget(BudgetAction::Stop, false), nov());
    let mut st = BudgetState::default();
    let t = p.start + 86_400;
    // 1005 crosses all three at once, lowest first; 985 is above 980 (98%): nothing;
    // 979 is below it: 100 resolves with a clear; 1000 crosses it again (#2) and limits.
    let out = run(
        &b,
        &mut st,
        &p,
        &[
            ("1005", "0", t),
            ("985", "0", t + 1),
            ("1000", "0", t + 2),
            ("979", "0", t + 3),
            ("1000", "0", t + 4),
        ],
    );
    assert_eq!(
        keys(&out[0]),
        [
            "budget:b1:2026-11:50:actual:crossed#1",
            "budget:b1:2026-11:80:actual:crossed#1",
            "budget:b1:2026-11:100:actual:crossed#1",
        ]
    );
    assert!(out[1].is_empty() && out[2].is_empty());
    assert_eq!(keys(&out[3]), ["budget:b1:2026-11:100:actual:resolved#1"]);
    assert_eq!(out[3][0].kind, NoticeKind::BudgetResolved);
    assert_eq!(
        out[3][0].decision.as_ref().unwrap().kind,
        DecisionKind::Clear
    );
    assert_eq!(out[3][0].payload["reason"], "below");
    assert_eq!(keys(&out[4]), ["budget:b1:2026-11:100:actual:crossed#2"]);
    assert_eq!(
        out[4][0].decision.as_ref().unwrap().kind,
        DecisionKind::Limit
    );
}

#[test]
fn forecast_crosses_before_actual_and_resolves_when_the_instances_stop() {
    let (b, p) = (budget(BudgetAction::Notify, true), nov());
    let mut st = BudgetState::default();
    // Day 10: cost 300, 0.0005/s over 20 days left: 300 + 864 = 1164, over 50, 80 and 100.
    // Day 15: cost 510 + 0.0005 x 1,296,000 = 510 + 648 = 1158: actual 50 crosses.
    // Day 16: the instance stopped (burn 0): forecast = 560, below 980 and 780, not 480.
    let out = run(
        &b,
        &mut st,
        &p,
        &[
            ("300", "0.0005", p.start + 10 * 86_400),
            ("510", "0.0005", p.start + 15 * 86_400),
            ("560", "0", p.start + 16 * 86_400),
        ],
    );
    assert_eq!(
        keys(&out[0]),
        [
            "budget:b1:2026-11:50:forecast:crossed#1",
            "budget:b1:2026-11:80:forecast:crossed#1",
            "budget:b1:2026-11:100:forecast:crossed#1",
        ]
    );
    assert_eq!(out[0][0].payload["forecast"], "1164.00");
    assert_eq!(keys(&out[1]), ["budget:b1:2026-11:50:actual:crossed#1"]);
    assert_eq!(out[1][0].payload["forecast"], "1158.00");
    assert_eq!(
        keys(&out[2]),
        [
            "budget:b1:2026-11:100:forecast:resolved#1",
            "budget:b1:2026-11:80:forecast:resolved#1",
        ]
    );
}

#[test]
fn one_threshold_crossed_by_both_measures_at_once_is_forecast_first() {
    let (b, p) = (budget(BudgetAction::Notify, true), nov());
    let mut st = BudgetState::default();
    // 600 actual, forecast 600 + 0.0001 x 1,728,000 = 772.8: 50 on both, 80 on neither.
    let out = run(&b, &mut st, &p, &[("600", "0.0001", p.start + 10 * 86_400)]);
    assert_eq!(
        keys(&out[0]),
        [
            "budget:b1:2026-11:50:forecast:crossed#1",
            "budget:b1:2026-11:50:actual:crossed#1",
        ]
    );
}

#[test]
fn a_new_period_resolves_the_old_periods_crossings_and_lifts_the_limit() {
    let b = budget(BudgetAction::Stop, false);
    let (p, dec) = (nov(), Period::month("2026-12", chrono_tz::UTC).unwrap());
    let mut st = BudgetState::default();
    run(&b, &mut st, &p, &[("1010", "0", p.end - 60)]);
    let out = run(&b, &mut st, &dec, &[("12", "0", dec.start + 60)]);
    assert_eq!(
        keys(&out[0]),
        [
            "budget:b1:2026-11:100:actual:resolved#1",
            "budget:b1:2026-11:80:actual:resolved#1",
            "budget:b1:2026-11:50:actual:resolved#1",
        ]
    );
    assert_eq!(out[0][0].payload["reason"], "period_ended");
    assert_eq!(
        out[0][0].payload["cost"], "1010.00",
        "the old period's last cost"
    );
    assert_eq!(
        out[0][0].decision.as_ref().unwrap().kind,
        DecisionKind::Clear
    );
    assert!(!st.limited);
    assert_eq!(st.period.as_ref().unwrap().label, "2026-12");
    // A late observation of November changes nothing now.
    let late = run(&b, &mut st, &p, &[("2000", "0", dec.start + 61)]);
    assert!(late[0].is_empty());
    assert_eq!(st.period.as_ref().unwrap().label, "2026-12");
}

#[test]
fn a_threshold_taken_off_the_budget_resolves_once_and_keeps_its_count() {
    let (mut b, p) = (budget(BudgetAction::Notify, false), nov());
    let mut st = BudgetState::default();
    run(&b, &mut st, &p, &[("850", "0", p.start + 10)]);
    b.thresholds = vec![d("50"), d("100")];
    let out = run(
        &b,
        &mut st,
        &p,
        &[("850", "0", p.start + 11), ("850", "0", p.start + 12)],
    );
    assert_eq!(keys(&out[0]), ["budget:b1:2026-11:80:actual:resolved#1"]);
    assert_eq!(out[0][0].payload["reason"], "removed");
    assert!(out[1].is_empty());
    b.thresholds.push(d("80"));
    let out = run(&b, &mut st, &p, &[("850", "0", p.start + 13)]);
    assert_eq!(keys(&out[0]), ["budget:b1:2026-11:80:actual:crossed#2"]);
}

#[test]
fn evaluating_the_same_observation_twice_emits_nothing_the_second_time() {
    let (b, p) = (budget(BudgetAction::Stop, true), nov());
    let obs = BudgetObservation {
        period: &p,
        cost: d("990"),
        burn_rate_per_second: d("0.01"),
        now: p.start + 86_400,
    };
    let first = evaluate(&b, &BudgetState::default(), &obs);
    assert_eq!(
        first.notices.len(),
        5,
        "actual 50, 80; forecast 50, 80, 100"
    );
    let second = evaluate(&b, &first.state, &obs);
    assert!(second.notices.is_empty());
    assert_eq!(second.state, first.state);
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// One observation: the cost in cents, the burn in hundredths of a cent a second, the
    /// seconds since the last one, and whether it is the next month's first.
    fn steps() -> impl Strategy<Value = Vec<(u32, u32, u32, bool)>> {
        prop::collection::vec(
            (
                0u32..150_000,
                0u32..20,
                0u32..200_000,
                prop::bool::weighted(0.05),
            ),
            1..60,
        )
    }

    fn replay(b: &Budget, steps: &[(u32, u32, u32, bool)]) -> Vec<Notice> {
        let mut period = nov();
        let mut now = period.start;
        let mut st = BudgetState::default();
        let mut out = Vec::new();
        for &(cents, burn, dt, next) in steps {
            if next {
                let label = if period.label == "2026-11" {
                    "2026-12"
                } else {
                    "2027-01"
                };
                period = Period::month(label, chrono_tz::UTC).unwrap();
                now = now.max(period.start);
            }
            now = (now + i64::from(dt)).min(period.end - 1);
            let obs = BudgetObservation {
                period: &period,
                cost: Decimal::new(i64::from(cents), 2),
                burn_rate_per_second: Decimal::new(i64::from(burn), 4),
                now,
            };
            let e = evaluate(b, &st, &obs);
            st = e.state;
            out.extend(e.notices);
        }
        out
    }

    proptest! {
        #[test]
        fn crossed_and_resolved_alternate_per_threshold_and_replays_agree(s in steps()) {
            let b = budget(BudgetAction::Stop, true);
            let notices = replay(&b, &s);
            let mut last: BTreeMap<(String, String), NoticeKind> = BTreeMap::new();
            let mut limited = false;
            for n in &notices {
                let id = (
                    n.payload["measure"].as_str().unwrap().to_string(),
                    n.payload["threshold_percent"].as_str().unwrap().to_string(),
                );
                let before = last.insert(id.clone(), n.kind);
                match n.kind {
                    NoticeKind::BudgetCrossed => prop_assert_ne!(before, Some(NoticeKind::BudgetCrossed), "{:?}", id),
                    _ => prop_assert_eq!(before, Some(NoticeKind::BudgetCrossed), "{:?}", id),
                }
                match n.decision.as_ref().map(|d| d.kind) {
                    Some(DecisionKind::Limit) => { prop_assert!(!limited); limited = true; }
                    Some(DecisionKind::Clear) => { prop_assert!(limited); limited = false; }
                    Some(other) => prop_assert!(false, "budget decided {:?}", other),
                    None => {}
                }
            }
            let keys: std::collections::BTreeSet<&str> = notices.iter().map(|n| n.key.as_str()).collect();
            prop_assert_eq!(keys.len(), notices.len(), "every key is emitted once");
            prop_assert_eq!(replay(&b, &s), notices);
        }
    }
}
