//! # billing-core: the pure heart of gpubill
//!
//! Everything that decides money lives here and nowhere else: decoding and validating
//! CloudEvents ([`event`]), identity dedupe ([`dedupe`]), the per-second ledger of
//! disjoint runs ([`ledger`]), the price book ([`pricebook`]), calendar periods
//! ([`period`]), off-peak windows ([`offpeak`]), tiers ([`tiers`]), reservations
//! ([`reservations`]), the per-resource minimum charge ([`minimum`]), egress ([`egress`]),
//! the assembly of lines, rounding and totals ([`rating`], [`invoice`]), and the invoice CSV
//! export's rows ([`export`]).
//!
//! Part 2 (GPU rental economics, sections 8 to 14) adds the rental events ([`rental`],
//! decoded by [`event::decode_any`]), lease timelines ([`lease`]), spot curves and node
//! faults ([`platform`]), and a module per rule: lease states ([`states`]), on-demand usage
//! with packages and subscriptions ([`ondemand`], [`subscriptions`]), spot curves and
//! interruption ([`spot`]), SLA compensation ([`sla`]), counter egress ([`counters`]) and
//! credits across periods ([`credits`]).
//!
//! The crate does no I/O, never reads the clock and never uses floating point: time comes in
//! as arguments (UTC Unix seconds), money is [`rust_decimal::Decimal`]. It implements
//! `billing-semantics.md` (normative); every choice made where that page is silent is
//! written down next to the code that makes it and collected in [`choices`].

// The pure core decides money: no `unwrap` that could abort a fold (a `Result` names what is
// wrong), and no float arithmetic anywhere near an amount (issue 25; tests may unwrap).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::float_arithmetic))]

pub mod adjustment;
pub mod binary_mode;
pub mod choices;
pub mod counters;
pub mod credits;
pub mod decimal;
pub mod dedupe;
pub mod egress;
pub mod event;
pub mod event_fields;
pub mod export;
pub mod holdings;
pub mod invoice;
pub mod journal;
pub mod json;
pub mod lease;
pub mod ledger;
pub mod limits;
pub mod magnitude;
pub mod meter;
pub mod minimum;
pub mod money;
pub mod numbering;
pub mod offpeak;
pub mod ondemand;
pub mod oversize;
pub mod period;
pub mod platform;
pub mod pricebook;
pub mod prices;
pub mod profile;
pub mod quota;
pub mod rating;
pub mod rating_context;
pub mod reject;
pub mod rental;
pub mod reservations;
pub mod runs;
pub mod settlement;
pub mod sla;
pub mod spot;
pub mod states;
pub mod subscriptions;
pub mod term_changes;
pub mod text;
pub mod tiers;
pub mod timestamp;

pub use event::{AnyData, AnyEvent, Class, Event, EventData, RejectReason, Rejection};
pub use invoice::{Invoice, Line};
pub use meter::{Admission, Meter};
pub use period::Period;
pub use pricebook::{PriceBook, PriceBookError};
pub use rating::{RatingError, Unpriced, rate_account};
