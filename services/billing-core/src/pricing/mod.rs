//! Usage to money: rating an account for a period (billing-semantics.md sections 3 to 6, 9 and 12
//! to 13). The price book ([`pricebook`]) and billing periods ([`period`]); rating ([`rating`])
//! with its context and errors ([`rating_context`]), each account's terms ([`account_index`]) and
//! magnitude bound ([`magnitude`]); a module per rule: tiers ([`tiers`]), off-peak windows
//! ([`offpeak`]), reservations ([`reservations`]), subscriptions ([`subscriptions`]), on-demand
//! usage with packages ([`ondemand`]), spot ([`spot`]), the minimum charge ([`minimum`]) and egress
//! ([`egress`]), billing increments ([`increment`]); lines, rounding and totals ([`invoice`]); and
//! the price list a customer reads ([`prices`]); section 18's allocation of a payer's invoice to
//! (member, tag value) cells ([`allocation`]). The rules of part 2 that read lease states, node
//! faults and counters are in [`crate::rental`]; credits across periods in
//! [`crate::finance::credits`].

pub mod account_index;
pub mod allocation;
pub mod allocation_report;
pub mod domain;
pub mod egress;
pub mod estimate;
pub mod increment;
pub mod invoice;
pub mod magnitude;
pub mod minimum;
pub mod offpeak;
pub mod ondemand;
pub mod period;
pub mod pricebook;
pub mod prices;
pub mod rating;
pub mod rating_context;
pub mod reservations;
pub(crate) mod rule_lines;
pub mod spot;
pub mod subscriptions;
pub mod summed;
pub mod tiers;
