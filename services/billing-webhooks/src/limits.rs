//! Every limit of the webhook delivery in one place, unit last.

/// Standard Webhooks: a symmetric secret is 24 to 64 random bytes (192 to 512 bits).
pub const SECRET_BYTES_MIN: usize = 24;
/// See [`SECRET_BYTES_MIN`].
pub const SECRET_BYTES_MAX: usize = 64;
/// The length of the secrets [`crate::sign::Secret::generate`] makes (Svix uses 24 too).
pub const SECRET_BYTES_GENERATED: usize = 32;

/// A message id goes into the signed content `id.timestamp.body`: short, no `.`.
pub const MESSAGE_ID_BYTES_MAX: usize = 64;

/// The window in which [`crate::sign::verify`] accepts a `webhook-timestamp` (the reference
/// libraries use 5 minutes).
pub const TIMESTAMP_TOLERANCE_SECONDS: i64 = 5 * 60;

/// Signatures sent per message: the current secret and the previous one during a rotation.
pub const SIGNATURES_MAX: usize = 2;

/// An endpoint's URL, as the customer typed it.
pub const URL_BYTES_MAX: usize = 2048;
/// Event-type filters of one endpoint.
pub const EVENT_FILTERS_MAX: usize = 64;
/// One event type in a filter.
pub const EVENT_TYPE_BYTES_MAX: usize = 128;
/// Addresses a host may resolve to; more looks like an attack on the checker.
pub const RESOLVED_ADDRESSES_MAX: usize = 32;

/// A whole attempt (connect, send, response headers and body) ends after this long.
pub const ATTEMPT_TIMEOUT_MS: u64 = 15_000;
/// Connecting alone ends after this long.
pub const CONNECT_TIMEOUT_MS: u64 = 5_000;
/// The error text kept in an attempt's log row.
pub const ATTEMPT_ERROR_BYTES_MAX: usize = 512;

/// Svix's schedule: after the first (immediate) attempt fails, the retries follow these
/// delays; a message whose last retry fails is marked failed. 8 attempts in all, spread over
/// 27 h 35 min 5 s (without jitter).
pub const RETRY_DELAYS_MS: [i64; 7] = [
    5_000,      // 5 s
    300_000,    // 5 min
    1_800_000,  // 30 min
    7_200_000,  // 2 h
    18_000_000, // 5 h
    36_000_000, // 10 h
    36_000_000, // 10 h
];
/// Jitter on each retry delay: ± this many per mille (± 10 %).
pub const RETRY_JITTER_PER_MILLE: i64 = 100;
/// An endpoint failing continuously for this long is disabled (Svix: 5 days).
pub const DISABLE_AFTER_FAILING_MS: i64 = 5 * 24 * 3_600_000;

/// Endpoints attempted concurrently by one tick of the worker.
pub const ENDPOINTS_PER_TICK_MAX: usize = 256;
/// The worker's idle wait between ticks when nothing was due.
pub const POLL_INTERVAL_MS: u64 = 250;
