//! Which changes to an account term are allowed (issue 10): only what has not started or not
//! been consumed may change. Pure: "now", what a credit has given and the closed periods are
//! passed in.
//!
//! - Reservation: before its `from`, anything. Once started only `to` may change, to no
//!   earlier than now (elapsed reserved seconds stay billed); it cannot be ended (DELETE).
//! - Discount: may change or end at any time; it applies to the periods not yet closed (like a
//!   price book upload), an issued invoice never changes. A dated one (section 16's `from`)
//!   also reaches a closed period it is dated into, as an adjustment ([`dated_into`]).
//! - Credit: until an issued invoice drew from it, anything. Once drawn only `amount` may
//!   change, to no less than what was drawn; it cannot be ended.
//! - Package: before its `from`, anything. Once started (`from <= now`) only `to` may be
//!   extended and `hours` increased (consumed seconds stay consumed); it cannot be ended.
//! - Subscription: before its `start`, anything. Once started, what it sold (sku, quantity,
//!   cycle, start, price, region) stays; `cycles` may change to no fewer than the cycles
//!   started by now (a renewal adds cycles); until its `end` has passed it may be ended early
//!   (section 17: `end` no earlier than now, with `refund = "prorata"` the unused part of the
//!   cycle is refunded), its end moved or dropped, its renewal turned on or off
//!   (`check_started_subscription`). DELETE keeps the started cycles and drops the future
//!   ones (see [`ended_subscription_cycles`]).
//! - Charge (section 20): while the period holding its `at` is open, anything (it is billed
//!   at that period's close). Once that period is closed it was invoiced: it may neither
//!   change nor be ended (a correction is a credit or a new charge). Which periods are closed
//!   is the store's to say ([`check_change`]'s `closed`).
//!
//! A new term (no old version) is always allowed, whatever its dates.
//!
//! Re-rating a closed period (issue 24.1, [`terms_for_closed_period`]): it keeps the terms it
//! was closed with; a later change reaches it only when the term is dated into it.

mod closed;
mod rules;
#[cfg(test)]
mod tests;

pub use closed::{dated_into, terms_for_closed_period};
pub use rules::{Consumed, TermConflict, check_change, ended_subscription_cycles, started_cycles};
