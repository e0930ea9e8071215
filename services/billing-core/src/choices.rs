//! Where billing-semantics.md is silent or ambiguous, gpubill chooses, and says so here.
//! Each choice is also documented at the code that makes it.
//!
//! Events (section 1, [`crate::event`])
//! - Content, for duplicate versus conflict, is the event's *meaning*: subject, time, type and
//!   data, with instants compared as instants and quantities as numbers. Key order, whitespace,
//!   `"Z"` versus `"+00:00"` or `"1"` versus `"1.0"` never turn a redelivery into a conflict.
//!   Unknown extension attributes are not part of the content.
//! - "The first one stands" means the first in delivery order (file order for `gpubill rate`,
//!   log order for the engine); the conflicting later one is dead-lettered.
//! - `time` is optional on `gpu.usage` and required on `net.egress`; `lease` is required on
//!   `gpu.usage` and optional on `net.egress`; an empty string counts as missing.
//! - `quantity` is a decimal string or a JSON integer; a JSON float is `bad_quantity`.
//! - Reason names beyond the page's examples: `record_too_large`, `malformed_json`,
//!   `bad_specversion`, `unknown_type`, `missing_id`, `missing_source`, `missing_subject`,
//!   `missing_field`, `wrong_type`, `string_too_long`, `bad_time`, `empty_interval`,
//!   `interval_too_long`, `bad_quantity`, `bad_bytes`, `bad_class`, `conflict`.
//!
//! Accounts (section 6)
//! - "Named by any event" means any *accepted* event, whatever its period; a rejected event
//!   names no account.
//!
//! Price book (section 3, [`crate::pricebook`])
//! - Unknown keys are errors; decimals are strings or integers, never floats; `timezone`
//!   defaults to UTC; reservations must name an sku with an on-demand price, in whole seconds;
//!   discount percents of one account add up to at most 100; a last tier with a bound still
//!   takes everything beyond it; off-peak `to = "24:00"` is allowed.
//!
//! Rating (section 4)
//! - Off-peak `days` are checked against the local weekday of each second itself, also in
//!   the after-midnight part of a window that wraps ([`crate::offpeak`]).
//! - The minimum charge counts seconds covered by the resource's events, not by reservations
//!   ([`crate::minimum`]).
//! - A period whose local midnight does not exist starts at the clock jump ([`crate::period`]).
//! - Volume tiers are priced per multiplier: one line per (chosen tier, multiplier).
//!
//! Lines (sections 5 and 6)
//! - Two `reserved_commitment` lines of the same sku sort by their order in the price book.
//! - Quantities are shown without trailing zeros (`2250`, not `2250.00`); multipliers as the
//!   price book wrote them (`0.70`), `1` when no window applies.
//! - A `reserved_usage` line is shown for a reserved sku only when it covered something
//!   (a zero-quantity line is left out like any other).
