//! Every limit of the core in one place, each with the reason it exists.

use rust_decimal::Decimal;

/// A single event record (one Kafka record or one JSONL line); billing-semantics.md section 1.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// Any string attribute or data field of an event (ids, account, lease, sku, ...); section 1.
pub const MAX_STRING_BYTES: usize = 256;

/// The longest `[start, end)` of one `gpu.usage` event; section 1. Longer intervals are a
/// sign of a stuck agent and would let one bad record bill a whole day.
pub const MAX_INTERVAL_SECONDS: i64 = 86_400;

/// The largest `quantity` of one usage event (a 10 TB volume billed per GB fits); section 1.
pub const MAX_QUANTITY: Decimal = Decimal::from_parts(10_000, 0, 0, false, 0);

/// Largest rate accepted in a price book, per unit-hour or per GB. Far above any real price,
/// low enough that no sum over a period can overflow a `Decimal`.
pub const MAX_RATE: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// Largest off-peak multiplier: a window may also surcharge peak hours, within reason.
pub const MAX_MULTIPLIER: Decimal = Decimal::from_parts(100, 0, 0, false, 0);

/// Largest reserved quantity of one reservation.
pub const MAX_RESERVED_QUANTITY: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

/// Largest credit of one price book entry.
pub const MAX_CREDIT: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// Largest `minimum_seconds` of an sku: one day.
pub const MAX_MINIMUM_SECONDS: i64 = 86_400;
/// Largest billing increment of an sku (section 15).
pub const MAX_INCREMENT_SECONDS: i64 = 86_400;

/// Years a period may name; keeps every instant well inside chrono's and i64's range.
pub const MIN_YEAR: i32 = 1970;
/// See [`MIN_YEAR`].
pub const MAX_YEAR: i32 = 9999;

/// The earliest instant an event may name: 2000-01-01T00:00:00Z. Periods and every rule are
/// defined far beyond it; the range keeps every period of an event inside [`MIN_YEAR`] ..
/// [`MAX_YEAR`] in any timezone, so a batch always knows which periods it touched (an event
/// from 1969 once belonged to no period and froze its account's provisional cost).
pub const MIN_EVENT_SECS: i64 = 946_684_800;

/// The latest instant an event may name: 2100-01-01T00:00:00Z (an end exactly there is
/// accepted). The engine also refuses events ending further in the future than its clock plus
/// a configured limit (`too_early`).
pub const MAX_EVENT_SECS: i64 = 4_102_444_800;

/// Most unit-hours of one package (a thousand GPUs for a thousand hours).
pub const MAX_PACKAGE_HOURS: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// Largest price of one package or one subscription cycle, like [`MAX_CREDIT`].
pub const MAX_TERM_PRICE: Decimal = MAX_CREDIT;

/// Most cycles of one subscription: a century of months.
pub const MAX_SUBSCRIPTION_CYCLES: i64 = 1200;

/// Largest SLA `compensation_multiplier`.
pub const MAX_COMPENSATION_MULTIPLIER: Decimal = Decimal::from_parts(100, 0, 0, false, 0);

/// Largest SLA `attach_seconds`: a day before a fault is still "just before" it.
pub const MAX_ATTACH_SECONDS: i64 = 86_400;

/// Default SLA `attach_seconds` (section 10).
pub const DEFAULT_ATTACH_SECONDS: i64 = 300;

/// Thresholds of one budget (issue 28): Stripe allows 25 alerts per meter; a budget needs a
/// handful (50/80/100%), and each threshold is state the engine carries per period.
pub const MAX_BUDGET_THRESHOLDS: usize = 25;

/// The highest budget threshold, in percent of the amount (issue 28): 10 x the budget.
pub const MAX_BUDGET_THRESHOLD_PERCENT: Decimal = Decimal::from_parts(1000, 0, 0, false, 0);

/// Reminder windows of one policy (issue 28): one reminder per window per term.
pub const MAX_REMINDER_WINDOWS: usize = 5;

/// The widest reminder window, in days (issue 28): a yearly plan's reminder a quarter ahead.
pub const MAX_REMINDER_DAYS: u32 = 90;

/// The longest arrears grace before the stop, and the longest wait from the stop to the
/// release (issue 28): a year; a longer one is a policy of never, said by not setting one.
pub const MAX_ARREARS_STEP_SECONDS: i64 = 366 * 86_400;
