//! Retries against an in-process receiver that fails the first N attempts, with a test clock:
//! the schedule within its jitter, the order per endpoint, parallel endpoints, disabling after
//! 5 days of failure, re-enabling and resending.

mod common;

use std::sync::Arc;

use billing_webhooks::clock::TestClock;
use billing_webhooks::limits::{DISABLE_AFTER_FAILING_MS, RETRY_DELAYS_MS};
use billing_webhooks::memory::MemoryOutbox;
use billing_webhooks::outbox::{AttemptOutcome, EndpointId, NotificationId};
use billing_webhooks::schedule::DeliveryStatus;
use billing_webhooks::sign::verify;
use common::{T0_MS, endpoint, loopback_allowed, secret, spawn_receiver, worker};

fn body(n: usize) -> String {
    format!(r#"{{"type":"budget.threshold_crossed","data":{{"n":{n}}}}}"#)
}

#[tokio::test]
async fn a_receiver_failing_three_times_gets_the_retries_on_schedule_then_the_rest_in_order() {
    let (receiver, url) = spawn_receiver().await;
    receiver.set_fail_next(3);
    let (outbox, clock) = (
        Arc::new(MemoryOutbox::new()),
        Arc::new(TestClock::new(T0_MS)),
    );
    let ep = EndpointId("ep_a".into());
    outbox.add_endpoint(endpoint("ep_a", Some("acct_1"), &url, secret(1)), T0_MS);
    let first = outbox.publish(Some("acct_1"), "budget.threshold_crossed", &body(1), T0_MS);
    outbox.publish(Some("acct_1"), "budget.threshold_crossed", &body(2), T0_MS);
    outbox.publish(Some("acct_1"), "budget.threshold_crossed", &body(3), T0_MS);
    let worker = worker(&outbox, &clock, loopback_allowed());

    // Attempt 1 at once, then retries after 5 s, 5 min, 30 min, each within ± 10 %.
    for (retry, base_ms) in RETRY_DELAYS_MS.iter().take(3).enumerate() {
        let attempted_at_ms = clock.now_ms_for_test();
        assert_eq!(worker.tick().await.expect("tick").attempted, 1);
        let row = outbox.delivery(&ep, first).expect("a delivery");
        assert_eq!(
            (row.status, row.attempts_total),
            (DeliveryStatus::Pending, retry as u32 + 1)
        );
        let delay_ms = row.next_attempt_at_ms - attempted_at_ms;
        assert!(
            (base_ms * 9 / 10..=base_ms * 11 / 10).contains(&delay_ms),
            "retry {} after {delay_ms} ms, the schedule says {base_ms} ms ± 10 %",
            retry + 1
        );
        // Not due before its time, and message 2 waits behind message 1.
        clock.set(row.next_attempt_at_ms - 1);
        assert_eq!(worker.tick().await.expect("tick").attempted, 0);
        clock.set(row.next_attempt_at_ms);
    }
    for _ in 0..3 {
        assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    }
    assert_eq!(worker.tick().await.expect("tick").attempted, 0);

    assert_eq!(
        receiver.ids(),
        ["msg_1", "msg_1", "msg_1", "msg_1", "msg_2", "msg_3"]
    );
    let statuses: Vec<u16> = receiver.received().iter().map(|r| r.answered).collect();
    assert_eq!(statuses, [500, 500, 500, 204, 204, 204]);
    for received in receiver.received() {
        assert_eq!(received.content_type, "application/json");
        let now_s = received.headers.timestamp.parse().expect("unix seconds");
        assert_eq!(
            verify(&secret(1), &received.headers, &received.body, now_s),
            Ok(())
        );
    }
    let log: Vec<(i64, u32, AttemptOutcome)> = outbox
        .attempts()
        .into_iter()
        .map(|a| (a.notification.0, a.attempt, a.outcome))
        .collect();
    assert_eq!(log[3], (1, 4, AttemptOutcome::Status(204)));
    assert_eq!(log[4], (2, 1, AttemptOutcome::Status(204)));
    assert_eq!(log.len(), 6);
}

#[tokio::test]
async fn a_failing_endpoint_holds_up_no_other() {
    let (failing, failing_url) = spawn_receiver().await;
    let (healthy, healthy_url) = spawn_receiver().await;
    failing.set_fail_next(usize::MAX);
    let (outbox, clock) = (
        Arc::new(MemoryOutbox::new()),
        Arc::new(TestClock::new(T0_MS)),
    );
    outbox.add_endpoint(
        endpoint("ep_failing", Some("acct_1"), &failing_url, secret(1)),
        T0_MS,
    );
    // A platform endpoint: every account's notifications.
    outbox.add_endpoint(
        endpoint("ep_platform", None, &healthy_url, secret(2)),
        T0_MS,
    );
    for n in 1..=3 {
        outbox.publish(Some("acct_1"), "arrears.started", &body(n), T0_MS);
    }
    outbox.publish(Some("acct_2"), "arrears.started", &body(4), T0_MS);
    let worker = worker(&outbox, &clock, loopback_allowed());

    let report = worker.tick().await.expect("tick");
    assert_eq!((report.attempted, report.delivered), (2, 1));
    for _ in 0..3 {
        assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    }
    assert_eq!(healthy.ids(), ["msg_1", "msg_2", "msg_3", "msg_4"]);
    assert_eq!(failing.ids(), ["msg_1"]);
}

#[tokio::test]
async fn delivery_time_checks_refuse_a_loopback_target_the_operator_does_not_allow() {
    let (receiver, url) = spawn_receiver().await;
    let (outbox, clock) = (
        Arc::new(MemoryOutbox::new()),
        Arc::new(TestClock::new(T0_MS)),
    );
    let by_name = url.replace("127.0.0.1", "localhost");
    outbox.add_endpoint(endpoint("ep_literal", None, &url, secret(1)), T0_MS);
    outbox.add_endpoint(endpoint("ep_name", None, &by_name, secret(1)), T0_MS);
    outbox.publish(None, "arrears.started", &body(1), T0_MS);
    let worker = worker(
        &outbox,
        &clock,
        billing_webhooks::target::AddressPolicy::public_only(),
    );

    assert_eq!(worker.tick().await.expect("tick").attempted, 2);
    assert!(
        receiver.received().is_empty(),
        "a refused address was reached"
    );
    for attempt in outbox.attempts() {
        let AttemptOutcome::Error(error) = &attempt.outcome else {
            panic!("{attempt:?} reached the receiver");
        };
        assert!(error.contains("loopback"), "{error}");
    }
}

trait NowForTest {
    fn now_ms_for_test(&self) -> i64;
}

impl NowForTest for TestClock {
    fn now_ms_for_test(&self) -> i64 {
        billing_webhooks::clock::Clock::now_ms(self)
    }
}

/// The first pending notification of `ep` and its row.
fn head(outbox: &MemoryOutbox, ep: &EndpointId, count: i64) -> Option<(NotificationId, i64)> {
    (1..=count).map(NotificationId).find_map(|n| {
        let row = outbox.delivery(ep, n)?;
        (row.status == DeliveryStatus::Pending).then_some((n, row.next_attempt_at_ms))
    })
}

#[tokio::test]
async fn an_endpoint_failing_for_five_days_is_disabled_and_resumes_in_order_when_reenabled() {
    let (receiver, url) = spawn_receiver().await;
    receiver.set_fail_next(usize::MAX);
    let (outbox, clock) = (
        Arc::new(MemoryOutbox::new()),
        Arc::new(TestClock::new(T0_MS)),
    );
    let ep = EndpointId("ep_a".into());
    outbox.add_endpoint(endpoint("ep_a", Some("acct_1"), &url, secret(1)), T0_MS);
    for n in 1..=6 {
        outbox.publish(Some("acct_1"), "wallet.low_balance", &body(n), T0_MS);
    }
    let worker = worker(&outbox, &clock, loopback_allowed());

    let mut ticks = 0;
    while worker.tick().await.expect("tick").disabled.is_empty() {
        let (_, next_ms) = head(&outbox, &ep, 6).expect("a pending head while enabled");
        clock.set(next_ms.max(clock.now_ms_for_test()));
        ticks += 1;
        assert!(ticks < 100, "never disabled");
    }
    let row = outbox.endpoint(&ep).expect("the endpoint");
    let attempts = outbox.attempts();
    let disabling = attempts.last().expect("attempts").at_ms;
    assert_eq!(
        (row.enabled, row.disabled_at_ms, row.failing_since_ms),
        (false, Some(disabling), Some(T0_MS))
    );
    assert!(disabling - T0_MS >= DISABLE_AFTER_FAILING_MS);
    assert!(
        attempts[attempts.len() - 2].at_ms - T0_MS < DISABLE_AFTER_FAILING_MS,
        "disabled late"
    );

    // The messages before the head failed after 8 attempts each; the head and the rest wait.
    let (stuck, _) = head(&outbox, &ep, 6).expect("a pending head");
    for n in 1..stuck.0 {
        let row = outbox.delivery(&ep, NotificationId(n)).expect("a delivery");
        assert_eq!(
            (row.status, row.attempts_total),
            (DeliveryStatus::Failed, 8),
            "message {n}"
        );
    }
    assert!(
        stuck.0 >= 4,
        "5 days hold at least 4 schedules of 27.6 h ± 10 %, the head is {}",
        stuck.0
    );
    assert!(attempts.iter().all(|a| a.notification <= stuck));

    // Disabled: nothing is attempted, new messages queue up.
    clock.set(disabling + DISABLE_AFTER_FAILING_MS);
    let late = outbox.publish(
        Some("acct_1"),
        "wallet.low_balance",
        &body(7),
        clock.now_ms_for_test(),
    );
    assert_eq!(worker.tick().await.expect("tick").attempted, 0);

    // Re-enabled by the customer: the head first, then the rest in order; failed ones stay.
    receiver.set_fail_next(0);
    let before = receiver.ids().len();
    assert!(worker.reenable(&ep).await.expect("reenable"));
    assert!(!worker.reenable(&ep).await.expect("reenable again"));
    while worker.tick().await.expect("tick").delivered == 1 {}
    let expected: Vec<String> = (stuck.0..=late.0).map(|n| format!("msg_{n}")).collect();
    assert_eq!(receiver.ids()[before..], expected);
    let row = outbox.endpoint(&ep).expect("the endpoint");
    assert_eq!(
        (row.enabled, row.disabled_at_ms, row.failing_since_ms),
        (true, None, None)
    );

    // A failed message is resendable, a delivered one too; a pending one is not.
    assert!(
        worker
            .resend(&ep, NotificationId(1))
            .await
            .expect("resend failed")
    );
    assert!(
        !worker
            .resend(&ep, NotificationId(1))
            .await
            .expect("resend pending")
    );
    assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    assert!(worker.resend(&ep, late).await.expect("resend delivered"));
    assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    assert_eq!(
        receiver.ids()[before + expected.len()..],
        ["msg_1".to_owned(), format!("msg_{}", late.0)]
    );
    assert_eq!(
        outbox
            .delivery(&ep, NotificationId(1))
            .expect("a delivery")
            .attempts_total,
        9
    );
}
