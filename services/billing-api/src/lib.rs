//! # billing-api: gpubill's HTTP interface (axum)
//!
//! `router(state)` builds the whole API; tests drive it without a socket through
//! `tower::ServiceExt::oneshot`. Three kinds of callers, told apart by their bearer token:
//! the admin (accounts, price books, closing periods, exports, dead letters), ingest clients
//! (node agents, rental backends: `POST /v1/events`) and customers (an API key that names one
//! account: their own usage, cost and invoices, nobody else's).
//! The web console (`console.rs`, issue 13) is served at `/` and calls these same routes.

mod admin;
mod auth;
mod catalog;
mod console;
mod csv_fuzz;
mod error;
mod finance;
mod handlers;
mod idempotency;
mod json_body;
pub mod limits;
mod openapi;
mod printable;
mod query;
mod quota;
mod terms;
mod usage;
pub use usage::Answers as UsageAnswers;

pub use auth::{Principal, generate_secret};
pub use error::ApiError;
pub use idempotency::fingerprint as idempotency_fingerprint;
pub use json_body::{JsonBody, check_duplicates as check_json_duplicates};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use billing_store::Store;
use std::sync::Arc;

/// Largest request body: an ingest batch of up to 10,000 events.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Reads "now" in Unix milliseconds. Injected so tests can set the time.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    })
}

#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    /// SHA-256 hex of the admin token.
    pub admin_token_hash: String,
    /// SHA-256 hex of the ingest token, when one is configured.
    pub ingest_token_hash: Option<String>,
    pub clock: Clock,
    /// In Kafka mode, where `POST /v1/events` hands records off (the usage topic) instead of
    /// folding them itself.
    pub sink: Option<Arc<dyn EventSink>>,
    /// Renders `/metrics` (Prometheus text format) when a recorder is installed.
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    /// Per-key rate limits (see [`limits`]); `Default` is unlimited.
    pub limiter: Arc<limits::RateLimiter>,
    /// Usage answers kept under their accounts' ledger tokens (see [`UsageAnswers`]).
    pub usage_answers: Arc<UsageAnswers>,
}

/// The port ingest hands records to (defined below the API and the Kafka crate).
pub use billing_store::EventSink;

pub fn router(state: AppState) -> Router {
    Router::new()
        // The web console: static files, not API routes (not in the OpenAPI document).
        .merge(console::routes())
        .route("/healthz", get(handlers::healthz))
        .route("/readyz", get(handlers::readyz))
        .route("/openapi.json", get(openapi::document))
        .route("/metrics", get(handlers::metrics))
        .route("/v1/events", post(handlers::ingest))
        .route("/v1/usage", get(usage::usage))
        .route("/v1/cost/current", get(handlers::cost_current))
        .route("/v1/invoices", get(handlers::list_invoices))
        .route("/v1/invoices/{id}", get(handlers::get_invoice))
        .route(
            "/v1/admin/accounts",
            post(handlers::create_account).get(handlers::list_accounts),
        )
        .route(
            "/v1/admin/pricebook",
            put(handlers::put_pricebook).get(catalog::get_pricebook),
        )
        .route("/v1/me", get(catalog::me))
        .route("/v1/prices", get(catalog::prices))
        .route("/v1/admin/accounts/{id}/quotas", put(quota::put_quotas))
        .route("/v1/admin/accounts/{id}/terms", get(terms::list_terms))
        .route(
            "/v1/admin/accounts/{id}/profile",
            put(printable::put_account_profile).get(printable::get_account_profile),
        )
        .route(
            "/v1/admin/seller",
            put(printable::put_seller).get(printable::get_seller),
        )
        .route(
            "/v1/admin/accounts/{id}/terms/{kind}/{term_id}",
            put(terms::put_term).delete(terms::delete_term),
        )
        .route("/v1/authorize", post(quota::authorize))
        .route("/v1/holds/{id}/extend", post(quota::extend_hold))
        .route("/v1/holds/{id}/release", post(quota::release_hold))
        .route("/v1/balance", get(quota::balance))
        .route("/v1/quota/decisions", get(quota::decisions))
        .route("/v1/admin/invoices/close", post(handlers::close_period))
        .route("/v1/admin/exports/invoices", get(handlers::export_invoices))
        .route("/v1/admin/dead-letters", get(handlers::dead_letters))
        .route("/v1/admin/adjustments", get(finance::pending_adjustments))
        .route("/v1/admin/exports/journal", get(finance::export_journal))
        .route(
            "/v1/admin/accounts/{id}/keys",
            get(admin::list_keys).post(admin::add_key),
        )
        .route(
            "/v1/admin/accounts/{id}/keys/{key_id}",
            axum::routing::delete(admin::revoke_key),
        )
        .route("/v1/admin/audit", get(admin::audit))
        .route("/v1/admin/accounts/{id}/topups", post(finance::topup))
        .route("/v1/admin/accounts/{id}/refunds", post(finance::refund))
        .route(
            "/v1/admin/invoices/{id}/payments",
            post(finance::pay_invoice),
        )
        .route(
            "/v1/admin/invoices/{id}/settle",
            post(finance::settle_invoice),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            idempotency::layer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::actor_layer,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(limits::json_errors))
        .with_state(state)
}
