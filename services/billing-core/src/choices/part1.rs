//! Part 1 (sections 1 to 7): events, accounts, the price book, rating and lines.
//!
//! Events (section 1, [`crate::events::event`])
//! - Content, for duplicate versus conflict, is the event's *meaning*: subject, time, type and
//!   data, with instants compared as instants and quantities as numbers. Key order, whitespace,
//!   `"Z"` versus `"+00:00"` or `"1"` versus `"1.0"` never turn a redelivery into a conflict.
//!   Unknown extension attributes are not part of the content.
//! - "The first one stands" means the first in delivery order (file order for `gpubill rate`,
//!   log order for the engine); the conflicting later one is dead-lettered.
//! - `time` is optional on `gpu.usage` and required on `net.egress`; `lease` is required on
//!   `gpu.usage` and optional on `net.egress`; an empty string counts as missing.
//! - `quantity` is a decimal string or a JSON integer; a JSON float is `bad_quantity`. The string
//!   follows one grammar everywhere gpubill reads a number ([`crate::common::decimal`]): plain
//!   digits with an optional fraction, no exponent, no underscores, at most 15 decimals (trailing
//!   zeros aside) and 13 integer digits, so every accepted value is exact and two texts that differ
//!   in value never read as one number.
//! - `subject` must be an account id, 1 to 256 of `A-Z a-z 0-9 . _ -` (the grammar of
//!   `POST /v1/admin/accounts`); anything else is `bad_subject` (it would become a billable
//!   account of its own).
//! - Every instant of an event lies in 2000-01-01T00:00:00Z ..= 2100-01-01T00:00:00Z, else
//!   `time_out_of_range`: every period of an event then exists in any timezone. The engine
//!   also refuses an event ending more than a configurable time (default a day) after its
//!   batch's clock as `too_early`. The clock is the engine's, recorded with each fold in the
//!   log (issue 30: the commands topic's `usage.folded` records), and a replay folds each
//!   batch again with it, so the same events are refused again; a record's own Kafka
//!   timestamp (a node agent's clock) never decides. `gpubill rate`, which has no clock,
//!   applies only the fixed range.
//! - The engine keeps identities for a dedupe horizon (default 90 days): an event ending
//!   before its batch's clock less the horizon is `too_late` (its identity may have been
//!   compacted away, so accepting it could count it twice). Late usage within the horizon is
//!   accepted and listed for adjustment (section 7).
//! - A leap second (`23:59:60Z`) is the first second of the next minute.
//! - A record over 64 KiB is kept as its length, SHA-256 and first 1 KiB (log and dead
//!   letter), rejected as `record_too_large`.
//! - In a batch body (a JSON array), each element is a record of its own: one that is not
//!   valid JSON is dead-lettered as `malformed_json` and the others are stored; only a body
//!   that is not an array of elements at all is refused as a whole.
//! - CloudEvents binary content mode ([`crate::events::binary_mode`]; HTTP `ce-*` headers, Kafka
//!   `ce_*` record headers, the data alone as the body) is read as the structured record it
//!   stands for, so one event sent in both modes is a duplicate, not a conflict. Binary mode
//!   is a `ce-specversion` header without a CloudEvents content type (structured and batch
//!   messages may repeat attributes in headers). HTTP header values are unquoted, then
//!   percent-decoded once (`node%2F1` is `node/1`), and must be UTF-8; Kafka header values are
//!   UTF-8 as they are. The data must be JSON (`application/json`, a `+json` type, or no
//!   content type): another content type is `wrong_type`, a body that is not JSON
//!   `malformed_json`, as are headers that do not decode, an attribute given twice, and a
//!   `ce-datacontenttype` or `ce-data` header. No new reason. A message that cannot be
//!   converted is kept as received in a stand-in that decoding refuses with that reason.
//! - Reason names beyond the page's examples: `record_too_large`, `malformed_json`,
//!   `bad_specversion`, `unknown_type`, `missing_id`, `missing_source`, `missing_subject`,
//!   `missing_field`, `wrong_type`, `string_too_long`, `control_character`, `bad_subject`, `bad_time`,
//!   `time_out_of_range`, `too_early`, `too_late`, `empty_interval`, `interval_too_long`, `bad_quantity`,
//!   `bad_bytes`, `bad_class`, `conflict`.
//!
//! Accounts (section 6)
//! - "Named by any event" means any *accepted* event, whatever its period; a rejected event
//!   names no account.
//!
//! Price book (section 3, [`crate::pricing::pricebook`])
//! - Credit amounts (and the quotas' money amounts) have at most the currency's 2 decimals:
//!   `0.005` is refused, not rounded into more credit than granted. `effective_from` is
//!   compared with a period's start exactly, fractions of a second included.
//! - Unknown keys are errors; decimals are strings or integers, never floats; `timezone`
//!   defaults to UTC; reservations must name an sku with an on-demand price;
//!   discount percents of one account add up to at most 100; a last tier with a bound still
//!   takes everything beyond it; off-peak `to = "24:00"` is allowed.
//!
//! Rating (section 4)
//! - An account that could owe more than 10^18 for a period (an upper bound over every
//!   unit-second at the book's highest rate and multiplier, and every GB at the highest egress
//!   rate) is a rating error, never an overflow: accepted but absurd magnitudes.
//! - Off-peak `days` are checked against the local weekday of each second itself, also in
//!   the after-midnight part of a window that wraps ([`crate::pricing::offpeak`]).
//! - The minimum charge counts seconds covered by the resource's events, not by reservations
//!   ([`crate::pricing::minimum`]).
//! - A period whose local midnight does not exist starts at the clock jump
//!   ([`crate::pricing::period`]).
//! - Volume tiers are priced per multiplier: one line per (chosen tier, multiplier).
//!
//! Lines (sections 5 and 6)
//! - Two `reserved_commitment` lines of the same sku sort by their order in the price book.
//! - Quantities are shown without trailing zeros (`2250`, not `2250.00`); multipliers as the
//!   price book wrote them (`0.70`), `1` when no window applies.
//! - A `reserved_usage` line is shown for a reserved sku only when it covered something
//!   (a zero-quantity line is left out like any other).
