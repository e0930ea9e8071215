//! # billing-core: the pure heart of gpubill
//!
//! Everything that decides money lives here and nowhere else, in one folder per domain:
//!
//! - [`events`]: records in. Decoding and validating CloudEvents ([`event`], structured and
//!   [`binary_mode`], over the size limit in [`oversize`]), identity dedupe ([`dedupe`]).
//! - [`ledger`]: usage over time. The per-second ledger of disjoint runs ([`runs`]) and
//!   metering, records in and ledger out ([`meter`]).
//! - [`pricing`]: usage to money. The price book ([`pricebook`]), calendar periods
//!   ([`period`]), off-peak windows ([`offpeak`]), tiers ([`tiers`]), reservations
//!   ([`reservations`]), subscriptions ([`subscriptions`]), on-demand usage with packages
//!   ([`ondemand`]), spot ([`spot`]), the per-resource minimum charge ([`minimum`]), egress
//!   ([`egress`]), the assembly of lines, rounding and totals ([`rating`], [`invoice`]) and
//!   the price list ([`prices`]).
//! - [`rental`]: GPU rental economics (part 2, sections 8 to 11). The rental events (decoded
//!   by [`event::decode_any`]), lease timelines ([`lease`]), spot curves and node faults
//!   ([`platform`]), and the rules that read them: lease states ([`states`]), SLA compensation
//!   ([`sla`]) and counter egress ([`counters`]).
//! - [`finance`]: after rating. Credits across periods ([`credits`]), adjustments
//!   ([`adjustment`]) and settlement ([`settlement`]), balances ([`holdings`]), term changes
//!   ([`term_changes`]), document numbers ([`numbering`]), profiles ([`profile`]), the journal
//!   ([`journal`]) and the invoice CSV export's rows ([`export`]).
//! - [`quota`]: quotas and authorizations as policy.
//! - [`notify`]: notifications (issue 28): budgets, a low balance, expiry and renewal
//!   reminders and the arrears sequence, as notices with dedupe keys and the quota decisions
//!   due with them.
//! - [`common`]: the shared low-level helpers ([`decimal`], [`money`], [`timestamp`],
//!   [`text`], [`limits`]).
//!
//! Every module is also reachable at the crate root under its own name (`billing_core::rating`,
//! `billing_core::event`, ...), the paths it had before the folders.
//!
//! The crate does no I/O, never reads the clock and never uses floating point: time comes in
//! as arguments (UTC Unix seconds), money is [`rust_decimal::Decimal`]. It implements
//! `billing-semantics.md` (normative); every choice made where that page is silent is
//! written down next to the code that makes it and collected in [`choices`].

// The pure core decides money: no `unwrap` that could abort a fold (a `Result` names what is
// wrong), and no float arithmetic anywhere near an amount (issue 25; tests may unwrap).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::float_arithmetic))]

pub mod choices;
pub mod common;
pub mod events;
pub mod finance;
pub mod ledger;
pub mod notify;
pub mod pricing;
pub mod quota;
pub mod rental;

// Every module keeps the path it had before the folders (issue 25): other crates, the tests,
// benches and fuzz targets name them there.
pub use common::{decimal, limits, money, text, timestamp};
pub use events::{binary_mode, dedupe, event, event_fields, json, oversize, reject};
pub use finance::{
    adjustment, credits, export, focus, holdings, journal, numbering, profile, settlement,
    term_changes,
};
pub use ledger::{meter, runs};
pub use pricing::{
    account_index, domain, egress, estimate, increment, invoice, magnitude, minimum, offpeak,
    ondemand, period, pricebook, prices, rating, rating_context, reservations, spot, subscriptions,
    tiers,
};
pub use rental::{counters, lease, platform, sla, states};

pub use events::event::{AnyData, AnyEvent, Class, Event, EventData, RejectReason, Rejection};
pub use ledger::meter::{Admission, Meter};
pub use pricing::invoice::{Invoice, Line};
pub use pricing::period::Period;
pub use pricing::pricebook::{PriceBook, PriceBookError};
pub use pricing::rating::{RatingError, Unpriced, rate_account};
