use super::*;
use crate::common::timestamp::Timestamp;
use crate::pricing::pricebook::{Cycle, Refund};

const DAY: i64 = 86_400;

fn at(s: &str) -> i64 {
    Timestamp::parse_rfc3339(s).unwrap().floor_secs()
}

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn sub(auto_renew: bool, cycles: u32, end: Option<&str>) -> Subscription {
    Subscription {
        index: 0,
        account: "acme".into(),
        id: "sub-a100".into(),
        sku: "gpu.a100-80g".into(),
        quantity: d("8"),
        cycle: Cycle::Month,
        start: at("2026-11-05T00:00:00Z"),
        cycles,
        price: d("30000.00"),
        auto_renew,
        end: end.map(at),
        refund: Refund::None,
        region: None,
    }
}

fn package(to: i64) -> Dated {
    Dated {
        kind: TermKind::Package,
        id: "pk-1".into(),
        account: "acme".into(),
        at: to,
        price: None,
        remaining: None,
    }
}

fn remind(st: &mut ExpiryState, terms: &[Dated], wallet: &str, now: i64) -> Vec<String> {
    let (next, ns) = reminders(&ReminderPolicy::default(), terms, d(wallet), st, now);
    *st = next;
    ns.into_iter().map(|n| n.key).collect()
}

#[test]
fn a_package_is_reminded_once_per_window_7_3_1_days_before_its_end() {
    let t0 = at("2026-11-01T00:00:00Z");
    let terms = [package(t0 + 10 * DAY)];
    let end = t0 + 10 * DAY;
    let mut st = ExpiryState::default();
    assert!(remind(&mut st, &terms, "0", t0).is_empty());
    assert!(remind(&mut st, &terms, "0", t0 + 3 * DAY - 1).is_empty());
    assert_eq!(
        remind(&mut st, &terms, "0", t0 + 3 * DAY),
        [format!("term:package:pk-1:{end}:7d")]
    );
    assert!(remind(&mut st, &terms, "0", t0 + 3 * DAY).is_empty());
    assert!(remind(&mut st, &terms, "0", t0 + 6 * DAY).is_empty());
    assert_eq!(
        remind(&mut st, &terms, "0", t0 + 7 * DAY),
        [format!("term:package:pk-1:{end}:3d")]
    );
    assert_eq!(
        remind(&mut st, &terms, "0", t0 + 9 * DAY + 1),
        [format!("term:package:pk-1:{end}:1d")]
    );
    assert!(remind(&mut st, &terms, "0", t0 + 10 * DAY).is_empty());
    assert!(st.sent.is_empty(), "reminders of a passed end are dropped");
}

#[test]
fn a_term_found_two_days_before_its_end_gets_only_the_3_day_reminder() {
    let t0 = at("2026-11-01T00:00:00Z");
    let credit = Credit {
        index: 2,
        account: "acme".into(),
        id: None,
        amount: d("500"),
        from: None,
        to: Some(t0 + 2 * DAY),
        region: None,
    };
    let terms = [credit_term(&credit).unwrap()];
    let mut st = ExpiryState::default();
    let (next, ns) = reminders(&ReminderPolicy::default(), &terms, d("0"), &st, t0);
    assert_eq!(ns.len(), 1);
    assert_eq!(ns[0].key, format!("term:credit:#2:{}:3d", t0 + 2 * DAY));
    assert_eq!(ns[0].payload["days_left"], 2);
    assert_eq!(ns[0].payload["ends_at"], "2026-11-03T00:00:00Z");
    st = next;
    assert_eq!(st.sent.len(), 2, "the 7-day window counts as sent");
    assert_eq!(
        remind(&mut st, &terms, "0", t0 + DAY),
        [format!("term:credit:#2:{}:1d", t0 + 2 * DAY)]
    );
    let open = Credit { to: None, ..credit };
    assert_eq!(credit_term(&open), None);
}

#[test]
fn a_subscription_without_auto_renew_ends_after_its_last_cycle_or_at_its_end() {
    let tz = chrono_tz::UTC;
    let now = at("2026-11-20T00:00:00Z");
    let t = subscription_term(&sub(false, 3, None), tz, now).unwrap();
    assert_eq!(
        (t.kind, t.at),
        (TermKind::Subscription, at("2027-02-05T00:00:00Z"))
    );
    let t = subscription_term(&sub(false, 3, Some("2027-01-20T00:00:00Z")), tz, now).unwrap();
    assert_eq!(t.at, at("2027-01-20T00:00:00Z"));
}

#[test]
fn an_auto_renewing_subscription_renews_at_its_next_cycle_and_flags_a_short_wallet() {
    let tz = chrono_tz::UTC;
    let s = sub(true, 1200, None);
    let now = at("2026-12-02T00:00:00Z");
    let t = subscription_term(&s, tz, now).unwrap();
    assert_eq!(
        (t.kind, t.at),
        (TermKind::Renewal, at("2026-12-05T00:00:00Z"))
    );
    assert_eq!(t.price, Some(d("30000.00")));
    // Three days before: the 7- and 3-day windows are open, the 3-day one is sent.
    let (_, ns) = reminders(
        &ReminderPolicy::default(),
        &[t],
        d("20000"),
        &ExpiryState::default(),
        now,
    );
    assert_eq!(ns.len(), 1);
    assert_eq!(ns[0].kind, NoticeKind::SubscriptionRenewing);
    assert_eq!(
        ns[0].key,
        format!(
            "subscription:sub-a100:{}:renewing:3d",
            at("2026-12-05T00:00:00Z")
        )
    );
    assert_eq!(ns[0].payload["wallet_covers"], false);
    assert_eq!(ns[0].payload["price"], "30000.00");
    assert_eq!(ns[0].payload["wallet"], "20000.00");
    assert!(
        subscription_term(&s, tz, at("2026-11-01T00:00:00Z")).is_none(),
        "not started"
    );
}

#[test]
fn an_auto_renewing_subscription_with_an_end_expires_at_it() {
    let tz = chrono_tz::UTC;
    let s = sub(true, 1200, Some("2026-12-20T00:00:00Z"));
    let t = subscription_term(&s, tz, at("2026-12-02T00:00:00Z")).unwrap();
    assert_eq!(t.kind, TermKind::Renewal, "Dec 5 is before the end");
    let t = subscription_term(&s, tz, at("2026-12-10T00:00:00Z")).unwrap();
    assert_eq!(
        (t.kind, t.at),
        (TermKind::Subscription, at("2026-12-20T00:00:00Z"))
    );
    assert!(subscription_term(&s, tz, at("2026-12-20T00:00:00Z")).is_none());
}

#[test]
fn notices_of_one_run_are_ordered_by_date() {
    let t0 = at("2026-11-01T00:00:00Z");
    let mut later = package(t0 + 5 * DAY);
    later.id = "pk-0".into();
    let terms = [later, package(t0 + 2 * DAY)];
    let keys = remind(&mut ExpiryState::default(), &terms, "0", t0);
    assert_eq!(
        keys,
        [
            format!("term:package:pk-1:{}:3d", t0 + 2 * DAY),
            format!("term:package:pk-0:{}:7d", t0 + 5 * DAY),
        ]
    );
}

#[test]
fn reminder_windows_are_checked() {
    assert_eq!(ReminderPolicy::default().validate(), Ok(()));
    let e = ReminderPolicy { days: vec![7, 0] }.validate().unwrap_err();
    assert_eq!(e.to_string(), "days[1]: 0 is out of range [1, 90]");
    let e = ReminderPolicy { days: vec![3, 3] }.validate().unwrap_err();
    assert_eq!(e.to_string(), "days[1]: 3 repeats days[0]");
    let e = ReminderPolicy {
        days: vec![1, 2, 3, 4, 5, 6],
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.to_string(), "days: 6 are more than 5");
}
