//! Time and randomness come in from outside, so that the tests drive both.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch.
pub trait Clock: Send + Sync {
    /// Now, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct TestClock {
    now_ms: AtomicI64,
}

impl TestClock {
    /// A clock standing at `now_ms`.
    pub fn new(now_ms: i64) -> TestClock {
        TestClock {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Moves the clock to `now_ms` (also backwards: tests only).
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `delta_ms`.
    pub fn advance(&self, delta_ms: i64) {
        self.now_ms.fetch_add(delta_ms, Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

/// A source of random numbers for the retry jitter.
pub trait Random: Send {
    /// The next uniformly distributed 64-bit number.
    fn next_u64(&mut self) -> u64;
}

/// The operating system's generator (getrandom); falls back to the clock's nanoseconds if the
/// generator fails, which only makes the jitter less random.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandom;

impl Random for OsRandom {
    fn next_u64(&mut self) -> u64 {
        getrandom::u64().unwrap_or_else(|error| {
            tracing::warn!(%error, "getrandom failed, jitter falls back to the clock");
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .subsec_nanos();
            SplitMix64::new(u64::from(nanos)).next_u64()
        })
    }
}

/// SplitMix64: a small deterministic generator, for tests and for seeding.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }
}

impl Random for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_clock_moves_only_when_told() {
        let clock = TestClock::new(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(5_000);
        assert_eq!(clock.now_ms(), 6_000);
        clock.set(42);
        assert_eq!(clock.now_ms(), 42);
    }

    #[test]
    fn splitmix_is_deterministic_and_not_constant() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        let first: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let second: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(first, second);
        assert_ne!(first[0], first[1]);
    }
}
