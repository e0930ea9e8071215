//! # billing-api: gpubill's HTTP interface (axum)
//!
//! `router(state)` builds the whole API; tests drive it without a socket through
//! `tower::ServiceExt::oneshot`. Three kinds of callers, told apart by their bearer token:
//! the admin (accounts, price books, closing periods, exports, dead letters), ingest clients
//! (node agents, rental backends: `POST /v1/events`) and customers (an API key that names one
//! account: their own usage, cost and invoices, nobody else's).
//! The web console (`console.rs`, issue 13) is served at `/` and calls these same routes.

mod accounts;
mod admin;
mod allocation;
mod answers;
mod auth;
mod catalog;
mod console;
mod csv_fuzz;
mod error;
mod estimate;
mod finance;
mod handlers;
mod idempotency;
mod json_body;
pub mod limits;
mod notify;
mod openapi;
mod organization;
mod printable;
mod query;
mod quota;
mod routes;
mod shard_routing;
pub mod shards;
mod state;
mod terms;
mod usage;
mod webhooks;
pub use answers::Answers as UsageAnswers;

pub use auth::{Principal, generate_secret};
pub use error::ApiError;
pub use idempotency::fingerprint as idempotency_fingerprint;
pub use json_body::{JsonBody, check_duplicates as check_json_duplicates};
pub use limits::MAX_BODY_BYTES;
pub use routes::router;
pub use state::{AppState, Clock, system_clock};

/// The port ingest hands records to (defined below the API and the Kafka crate).
pub use billing_store::EventSink;
