//! What an authorization asks for and answers, and a hold as stored (the types the store's
//! connection layer caches, kept apart from the code that decides them).

use crate::conn::error::{Result, StoreError};
use rust_decimal::Decimal;
use serde::Serialize;

/// What an authorization asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldRequest {
    pub account: String,
    /// Section 19: the region the lease runs in (`None`: home); the hold is the billing
    /// domain's (its quotas, wallet and the region's rate).
    pub region: Option<String>,
    pub sku: String,
    pub quantity: Decimal,
    pub seconds: i64,
    pub lease: Option<String>,
}

crate::conn::words::stored_id! {
    /// A hold's id (`hold_` and 96 random bits), as authorizations answer it.
    HoldId
}

/// A hold as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hold {
    pub id: HoldId,
    pub account: String,
    pub sku: String,
    pub quantity: Decimal,
    pub seconds: i64,
    pub amount: Decimal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// `live`, `released`, `expired`, or `captured` (usage for its lease arrived).
    pub status: HoldStatus,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

crate::conn::words::stored_words! {
    /// A hold's state, as stored in `holds.status` and shown in the API.
    pub enum HoldStatus {
        /// Reserving its amount until it expires, is released or captured.
        Live = "live",
        /// Released by the backend.
        Released = "released",
        /// Reached `expires_at` while live.
        Expired = "expired",
        /// Usage for its lease arrived: the usage counts from then on.
        Captured = "captured",
    }
}

/// The answer to an authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorization {
    Allowed(Hold),
    /// Denied by `quota` of `node`: what is used (including live holds) and the limit.
    Denied {
        /// The account whose limit fired: the account asked for (its own quotas), or one of
        /// its ancestors whose `spend_limit` bounds its subtree (issue 27, budgets per node).
        node: String,
        quota: String,
        used: Decimal,
        requested: Decimal,
        limit: Decimal,
    },
}

/// Why an authorization could not be decided.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    #[error("unknown account {0:?}")]
    UnknownAccount(String),
    #[error("no price book applies now: upload one with PUT /v1/admin/pricebook")]
    NoPriceBook,
    #[error("sku {0:?} has no on-demand rate in the price book that applies now")]
    UnknownSku(String),
    #[error("{0}")]
    Invalid(String),
    #[error("unknown hold {0:?}")]
    UnknownHold(String),
    #[error("hold {id:?} is {status}, not live")]
    NotLive { id: String, status: HoldStatus },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for HoldError {
    fn from(e: sqlx::Error) -> Self {
        HoldError::Store(StoreError::Db(e))
    }
}

pub(crate) struct Queued {
    pub(crate) req: HoldRequest,
    pub(crate) ttl_ms: i64,
    pub(crate) now_ms: i64,
    pub(crate) answer: tokio::sync::oneshot::Sender<Result<Authorization, HoldError>>,
}
