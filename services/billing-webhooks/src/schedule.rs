//! Svix's retry schedule, failing a message and disabling an endpoint: pure functions of the
//! attempt's outcome, its time and a random source.
//!
//! - A message is attempted at once, then retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
//!   10 h ([`limits::RETRY_DELAYS_MS`]), each delay jittered by ± 10 %. When the 8th attempt
//!   fails the message is **failed** (and stays resendable).
//! - An endpoint is **failing since** the first failed attempt after its last success (or its
//!   creation, or its re-enabling); any success clears it. The first failed attempt at `t` with
//!   `t - failing_since >= 5 days` **disables** the endpoint: with in-order delivery this is the
//!   oldest undelivered (or failed) message's first failed attempt being 5 days old with no
//!   success since. Its messages stay queued; re-enabling (the customer) clears the failure and
//!   makes them due at once, in order, each with a fresh schedule.

use crate::clock::Random;
use crate::limits;

/// Where a delivery (one message to one endpoint) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Waiting for its (next) attempt.
    Pending,
    /// A 2xx answered.
    Delivered,
    /// Every attempt of the schedule failed; `resend` puts it back.
    Failed,
}

/// An unknown status read from storage.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown delivery status {0:?} (pending, delivered, failed)")]
pub struct UnknownStatus(pub String);

impl DeliveryStatus {
    /// The name stored in `deliveries.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

impl std::str::FromStr for DeliveryStatus {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<DeliveryStatus, UnknownStatus> {
        match text {
            "pending" => Ok(DeliveryStatus::Pending),
            "delivered" => Ok(DeliveryStatus::Delivered),
            "failed" => Ok(DeliveryStatus::Failed),
            other => Err(UnknownStatus(other.to_owned())),
        }
    }
}

/// What follows an attempt for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    Delivered,
    RetryAt { at_ms: i64 },
    Failed,
}

/// An endpoint's health after an attempt (columns `failing_since`, `enabled`, `disabled_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointHealth {
    Healthy,
    Failing { since_ms: i64 },
    Disabled { since_ms: i64, at_ms: i64 },
}

/// The base delay before retry number `retry` (1-based), `None` past the schedule.
pub fn retry_delay_ms(retry: u32) -> Option<i64> {
    let index = usize::try_from(retry).ok()?.checked_sub(1)?;
    limits::RETRY_DELAYS_MS.get(index).copied()
}

/// `base_ms` ± up to [`limits::RETRY_JITTER_PER_MILLE`] per mille, uniformly.
pub fn jittered_ms(base_ms: i64, random: &mut dyn Random) -> i64 {
    let span = u64::try_from(2 * limits::RETRY_JITTER_PER_MILLE + 1).unwrap_or(1);
    let draw = i64::try_from(random.next_u64() % span).unwrap_or(0);
    let per_mille = draw - limits::RETRY_JITTER_PER_MILLE;
    base_ms + base_ms * per_mille / 1_000
}

/// The next step of a message whose attempt number `round_attempt` (1-based, counted since it
/// was queued, resent or its endpoint re-enabled) ended at `at_ms`.
pub fn next_step(
    succeeded: bool,
    round_attempt: u32,
    at_ms: i64,
    random: &mut dyn Random,
) -> NextStep {
    if succeeded {
        return NextStep::Delivered;
    }
    match retry_delay_ms(round_attempt) {
        Some(base_ms) => NextStep::RetryAt {
            at_ms: at_ms + jittered_ms(base_ms, random),
        },
        None => NextStep::Failed,
    }
}

/// The endpoint's health after an attempt at `at_ms`, given when it started failing.
pub fn endpoint_health(
    succeeded: bool,
    failing_since_ms: Option<i64>,
    at_ms: i64,
) -> EndpointHealth {
    if succeeded {
        return EndpointHealth::Healthy;
    }
    let since_ms = failing_since_ms.unwrap_or(at_ms);
    if at_ms - since_ms >= limits::DISABLE_AFTER_FAILING_MS {
        EndpointHealth::Disabled { since_ms, at_ms }
    } else {
        EndpointHealth::Failing { since_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SplitMix64;

    const HOUR_MS: i64 = 3_600_000;

    #[test]
    fn schedule_is_svix_eight_attempts_over_27_hours_35_minutes_5_seconds() {
        let delays: Vec<i64> = (1..=8).filter_map(retry_delay_ms).collect();
        assert_eq!(delays.len(), 7);
        assert_eq!(retry_delay_ms(0), None);
        assert_eq!(retry_delay_ms(8), None);
        // 5 s + 5 min + 30 min + 2 h + 5 h + 10 h + 10 h
        assert_eq!(
            delays.iter().sum::<i64>(),
            27 * HOUR_MS + 35 * 60_000 + 5_000
        );
    }

    #[test]
    fn jitter_stays_within_ten_percent_and_varies() {
        let mut random = SplitMix64::new(1);
        let draws: Vec<i64> = (0..1_000)
            .map(|_| jittered_ms(300_000, &mut random))
            .collect();
        assert!(
            draws.iter().all(|d| (270_000..=330_000).contains(d)),
            "{draws:?}"
        );
        let (min, max) = (draws.iter().min(), draws.iter().max());
        assert!(
            min < Some(&275_000) && max > Some(&325_000),
            "{min:?} {max:?}"
        );
    }

    #[test]
    fn eighth_failure_fails_the_message_earlier_ones_retry_with_jitter() {
        let mut random = SplitMix64::new(2);
        assert_eq!(next_step(true, 8, 0, &mut random), NextStep::Delivered);
        let NextStep::RetryAt { at_ms } = next_step(false, 1, 1_000, &mut random) else {
            panic!("the first failure is retried");
        };
        assert!((1_000 + 4_500..=1_000 + 5_500).contains(&at_ms), "{at_ms}");
        let NextStep::RetryAt { at_ms } = next_step(false, 7, 0, &mut random) else {
            panic!("the seventh failure is retried");
        };
        assert!((9 * HOUR_MS..=11 * HOUR_MS).contains(&at_ms), "{at_ms}");
        assert_eq!(next_step(false, 8, 0, &mut random), NextStep::Failed);
    }

    #[test]
    fn endpoint_is_disabled_by_the_first_failure_five_days_after_the_first_one() {
        let five_days_ms = 120 * HOUR_MS;
        assert_eq!(
            endpoint_health(false, None, 7),
            EndpointHealth::Failing { since_ms: 7 }
        );
        assert_eq!(
            endpoint_health(false, Some(7), 7 + five_days_ms - 1),
            EndpointHealth::Failing { since_ms: 7 }
        );
        assert_eq!(
            endpoint_health(false, Some(7), 7 + five_days_ms),
            EndpointHealth::Disabled {
                since_ms: 7,
                at_ms: 7 + five_days_ms
            }
        );
        assert_eq!(
            endpoint_health(true, Some(7), 7 + five_days_ms),
            EndpointHealth::Healthy
        );
    }

    #[test]
    fn statuses_parse_strictly() {
        for status in [
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Failed,
        ] {
            assert_eq!(status.as_str().parse(), Ok(status));
        }
        assert_eq!(
            "Pending".parse::<DeliveryStatus>(),
            Err(UnknownStatus("Pending".into()))
        );
    }
}
