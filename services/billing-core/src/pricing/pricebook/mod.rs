//! The price book in TOML: billing-semantics.md section 3.
//!
//! Parsed by walking the TOML tree by hand so that every error names the offending key (as a
//! path such as `skus."gpu.h100-80g".tiers[1].up_to_hours`) and its value. Unknown keys are
//! errors too: a misspelt `rate_per_hr` must not silently bill nothing.
//!
//! Choices where the page is silent:
//! - Decimals (rates, bounds, quantities, percents) are strings or TOML integers; TOML floats
//!   are rejected because they may already be inexact.
//! - `timezone` defaults to `UTC`; `currency` is required.
//! - An sku needs at least one of `rate_per_hour`, `tiers`, `spot_rate_per_hour`; on-demand
//!   usage of an sku with neither `rate_per_hour` nor `tiers` is unpriced.
//! - A reservation must name an sku with an on-demand price, and its `from`/`to` must be whole
//!   seconds with `from < to`.
//! - Discount percents of one account add up to at most 100.
//! - An egress table takes `tiers` or a flat `rate_per_gb`.
//! - Off-peak `to` may be `"24:00"`; times may carry seconds (`"06:30:15"`).

mod account_terms;
mod book;
mod model;
mod org;
mod org_moves;
mod org_tree;
mod regions;
mod skus;
mod terms;
mod terms_parse;
#[cfg(test)]
mod tests;
mod walk;

pub use account_terms::{AccountTerm, ParsedTerm, TermKind};
pub use book::PriceBook;
pub use model::{MAX_OFFPEAK_WINDOWS, MAX_TIERS, PriceBookError, Reservation, Sku};
pub use org::{MAX_DEPTH, Org};
pub use regions::{AccountMove, AccountSettings, Region};
pub use terms::{
    AUTO_RENEW_HORIZON, Charge, Credit, Cycle, Discount, Package, Refund, Sla, Subscription,
    auto_renew_cycles,
};
