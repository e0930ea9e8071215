use super::*;

const T0: i64 = 1_793_000_000;
const DAY: i64 = 86_400;

fn policy() -> ArrearsPolicy {
    ArrearsPolicy {
        grace_secs: DAY,
        release_after_secs: 3 * DAY,
    }
}

fn owes(balance: &str) -> Observed {
    Observed {
        balance: balance.parse().unwrap(),
        overdue: false,
    }
}

/// A test clock: each observation at its instant, the state carried from one to the next.
fn run(state: &mut ArrearsState, p: &ArrearsPolicy, at: i64, o: Observed) -> Vec<Notice> {
    let (next, notices) = step(state, p, &o, at);
    *state = next;
    notices
}

fn keyed(ns: &[Notice]) -> Vec<(&str, i64, Option<DecisionKind>)> {
    ns.iter()
        .map(|n| (n.key.as_str(), n.at, n.decision.as_ref().map(|d| d.kind)))
        .collect()
}

#[test]
fn stop_after_the_grace_and_release_three_days_later() {
    let (p, mut st) = (policy(), ArrearsState::new("acme"));
    let started = run(&mut st, &p, T0, owes("-5.00"));
    assert_eq!(keyed(&started), [("arrears:acme:1:started", T0, None)]);
    assert_eq!(started[0].payload["next"]["step"], "stop");
    assert_eq!(next_due(&st, &p), Some((T0 + DAY, Step::Stop)));
    assert!(run(&mut st, &p, T0 + DAY - 1, owes("-5.00")).is_empty());
    let stopped = run(&mut st, &p, T0 + DAY, owes("-7.20"));
    assert_eq!(
        keyed(&stopped),
        [("arrears:acme:1:stopped", T0 + DAY, Some(DecisionKind::Stop))]
    );
    assert_eq!(stopped[0].decision.as_ref().unwrap().quota, "arrears");
    assert_eq!(stopped[0].payload["balance"], "-7.20");
    assert_eq!(next_due(&st, &p), Some((T0 + 4 * DAY, Step::Release)));
    let released = run(&mut st, &p, T0 + 4 * DAY, owes("-9"));
    assert_eq!(
        keyed(&released),
        [(
            "arrears:acme:1:released",
            T0 + 4 * DAY,
            Some(DecisionKind::Release)
        )]
    );
    assert_eq!(next_due(&st, &p), None);
    assert!(run(&mut st, &p, T0 + 40 * DAY, owes("-9")).is_empty());
    // Paid after the release: the stop is lifted (the disks are gone).
    let cleared = run(&mut st, &p, T0 + 41 * DAY, owes("0"));
    assert_eq!(
        keyed(&cleared),
        [(
            "arrears:acme:1:cleared",
            T0 + 41 * DAY,
            Some(DecisionKind::Clear)
        )]
    );
    assert_eq!(cleared[0].payload["was"], "released");
}

#[test]
fn a_top_up_between_stop_and_release_cancels_the_release_and_lifts_the_stop() {
    let (p, mut st) = (policy(), ArrearsState::new("acme"));
    run(&mut st, &p, T0, owes("-5"));
    run(&mut st, &p, T0 + DAY, owes("-5"));
    let cleared = run(&mut st, &p, T0 + 2 * DAY, owes("50"));
    assert_eq!(
        keyed(&cleared),
        [(
            "arrears:acme:1:cleared",
            T0 + 2 * DAY,
            Some(DecisionKind::Clear)
        )]
    );
    assert_eq!(cleared[0].payload["was"], "stopped");
    assert_eq!(next_due(&st, &p), None);
    // The release's instant passes: nothing.
    assert!(run(&mut st, &p, T0 + 4 * DAY, owes("50")).is_empty());
    assert_eq!(st.phase, Phase::Clear);
}

#[test]
fn a_top_up_before_the_stop_clears_without_a_decision_and_a_new_debt_is_episode_2() {
    let (p, mut st) = (policy(), ArrearsState::new("acme"));
    run(&mut st, &p, T0, owes("-5"));
    let cleared = run(&mut st, &p, T0 + 3600, owes("10"));
    assert_eq!(
        keyed(&cleared),
        [("arrears:acme:1:cleared", T0 + 3600, None)]
    );
    let again = run(&mut st, &p, T0 + 7200, owes("-1"));
    assert_eq!(keyed(&again), [("arrears:acme:2:started", T0 + 7200, None)]);
    // The grace counts from the new start: stop at T0 + 7200 + 1 day.
    assert_eq!(next_due(&st, &p), Some((T0 + 7200 + DAY, Step::Stop)));
}

#[test]
fn an_overdue_invoice_is_arrears_whatever_the_balance() {
    let (p, mut st) = (policy(), ArrearsState::new("acme"));
    let o = Observed {
        balance: "120".parse().unwrap(),
        overdue: true,
    };
    assert!(o.in_arrears() && !owes("0").in_arrears() && owes("-0.01").in_arrears());
    let n = run(&mut st, &p, T0, o);
    assert_eq!(n[0].kind, NoticeKind::ArrearsStarted);
    assert_eq!(n[0].payload["overdue"], true);
}

#[test]
fn a_late_observation_takes_every_step_due_at_its_own_instant() {
    let (p, mut st) = (policy(), ArrearsState::new("acme"));
    run(&mut st, &p, T0, owes("-5"));
    let late = run(&mut st, &p, T0 + 10 * DAY, owes("-5"));
    assert_eq!(
        keyed(&late),
        [
            ("arrears:acme:1:stopped", T0 + DAY, Some(DecisionKind::Stop)),
            (
                "arrears:acme:1:released",
                T0 + 4 * DAY,
                Some(DecisionKind::Release)
            ),
        ]
    );
}

#[test]
fn a_zero_grace_stops_at_the_start() {
    let p = ArrearsPolicy {
        grace_secs: 0,
        release_after_secs: 3 * DAY,
    };
    let mut st = ArrearsState::new("acme");
    let n = run(&mut st, &p, T0, owes("-5"));
    assert_eq!(
        keyed(&n),
        [
            ("arrears:acme:1:started", T0, None),
            ("arrears:acme:1:stopped", T0, Some(DecisionKind::Stop)),
        ]
    );
}

#[test]
fn stepping_twice_with_the_same_inputs_emits_nothing_the_second_time() {
    let p = policy();
    let mut st = ArrearsState::new("acme");
    for (at, balance) in [
        (T0, "-5"),
        (T0 + DAY, "-5"),
        (T0 + 4 * DAY, "-5"),
        (T0 + 5 * DAY, "3"),
    ] {
        let (first, notices) = step(&st, &p, &owes(balance), at);
        assert!(!notices.is_empty(), "every instant here takes a step");
        let (second, again) = step(&first, &p, &owes(balance), at);
        assert!(again.is_empty());
        assert_eq!(second, first);
        st = first;
    }
}

#[test]
fn policies_out_of_range_name_the_field() {
    assert_eq!(ArrearsPolicy::default().validate(), Ok(()));
    let e = ArrearsPolicy {
        grace_secs: -1,
        release_after_secs: 0,
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "grace_secs: -1 is out of range [0, 31622400]"
    );
    let e = ArrearsPolicy {
        grace_secs: 0,
        release_after_secs: 400 * DAY,
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "release_after_secs: 34560000 is out of range [0, 31622400]"
    );
}
