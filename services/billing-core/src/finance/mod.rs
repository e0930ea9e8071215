//! After rating: what issued invoices become and what a customer holds. Credits across periods
//! ([`credits`]), adjustments and credit notes for late usage ([`adjustment`]), paying unpaid
//! invoices from the wallet ([`settlement`]), what a customer holds at an instant
//! ([`holdings`]), which account term changes are allowed ([`term_changes`]), document numbers
//! ([`numbering`]), buyer and seller profiles ([`profile`]), the double-entry journal
//! ([`journal`]), the invoice CSV export's rows ([`export`]) and the FinOps FOCUS export's
//! ([`focus`]).

pub mod adjustment;
pub mod credits;
pub mod export;
pub mod focus;
pub mod holdings;
pub mod journal;
pub mod numbering;
pub mod profile;
pub mod settlement;
pub mod term_changes;
