//! The price book's shared primitives: its error, the `Result` alias, the size limits, skus and
//! reservations (used by the section parsers and by [`super::PriceBook`]).

use crate::pricing::tiers::{Tier, TierMode};
use crate::rental::lease::LeaseState;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// Most off-peak windows in one price book.
pub const MAX_OFFPEAK_WINDOWS: usize = 64;
/// Most tiers of one sku or egress dest.
pub const MAX_TIERS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceBookError {
    #[error("price book is not valid TOML: {0}")]
    Syntax(String),
    #[error("{key} = {value}: {message}")]
    Invalid {
        key: String,
        value: String,
        message: String,
    },
    #[error("{key}: {message}")]
    Missing { key: String, message: String },
}

impl PriceBookError {
    /// The path of the offending key (empty for syntax errors).
    pub fn key(&self) -> &str {
        match self {
            PriceBookError::Syntax(_) => "",
            PriceBookError::Invalid { key, .. } | PriceBookError::Missing { key, .. } => key,
        }
    }
}

pub(super) type Result<T> = std::result::Result<T, PriceBookError>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sku {
    pub rate_per_hour: Option<Decimal>,
    pub spot_rate_per_hour: Option<Decimal>,
    pub minimum_seconds: Option<i64>,
    /// Section 15: on-demand runs are billed in whole increments of this many seconds.
    pub increment_seconds: Option<i64>,
    pub tier_mode: TierMode,
    /// Bounds in unit-seconds (`up_to_hours x 3600`), rates per unit-hour.
    pub tiers: Vec<Tier>,
    /// Section 8: per lease state, the rate per unit-hour of the seconds in that state.
    pub state_rates: BTreeMap<LeaseState, Decimal>,
}

impl Sku {
    /// The on-demand tiers, a plain rate being one unbounded tier.
    pub fn on_demand_tiers(&self) -> Option<Vec<Tier>> {
        if !self.tiers.is_empty() {
            Some(self.tiers.clone())
        } else {
            self.rate_per_hour
                .map(|rate| vec![Tier { up_to: None, rate }])
        }
    }

    /// First-tier (or plain) on-demand rate: what the minimum charge uses.
    pub fn first_rate(&self) -> Option<Decimal> {
        match self.tiers.first() {
            Some(t) => Some(t.rate),
            None => self.rate_per_hour,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Position in the price book's `[[reservations]]` (orders lines of equal keys).
    pub index: usize,
    pub account: String,
    pub sku: String,
    pub quantity: Decimal,
    pub from: i64,
    pub to: i64,
    pub rate_per_hour: Decimal,
    /// Section 19: the region it applies in (`None`: home).
    pub region: Option<String>,
}
