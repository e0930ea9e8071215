//! Usage over time, before any price: the per-second ledger of billing-semantics.md section 2
//! (this module), the disjoint runs a usage key's seconds are kept as ([`runs`]), metering
//! ([`meter`]): accepted records decoded, validated, deduped and folded into the ledger, and
//! the unit-seconds per bucket `GET /v1/usage` answers ([`usage`]).
//! Rating ([`crate::pricing`]) reads the ledger; nothing here knows a price.
//!
//! # The per-second ledger
//!
//! For each usage key and second the ledger holds the **maximum** quantity of all events of
//! that key covering the second. It is stored as disjoint, sorted runs `[from, to)` with one
//! quantity each; adjacent runs with equal quantities are merged, so the representation of a
//! given per-second function is unique and the ledger is a function of the *set* of events.

pub mod meter;
pub mod profile;
pub mod runs;
pub mod usage;

mod account;
mod key_runs;
mod keys;

pub use crate::ledger::account::AccountLedger;
pub use crate::ledger::keys::{
    CounterKey, EgressRecord, MEMBER_SEPARATOR, ResourceKey, UsageKey, member_lease,
    split_member_lease,
};
pub use crate::ledger::runs::{Run, Runs};
