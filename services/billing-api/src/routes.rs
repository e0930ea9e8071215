//! Every route of the API, and the handler that answers it.

use crate::state::AppState;
use crate::{
    accounts, admin, allocation, auth, catalog, console, estimate, finance, handlers, idempotency,
    limits, notify, openapi, organization, printable, quota, terms, usage, webhooks,
};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};

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
        .route("/v1/estimate", post(estimate::post_estimate))
        .route("/v1/invoices", get(handlers::list_invoices))
        .route("/v1/invoices/{id}", get(handlers::get_invoice))
        .route(
            "/v1/admin/accounts",
            post(handlers::create_account).get(handlers::list_accounts),
        )
        .route(
            "/v1/admin/accounts/{id}",
            axum::routing::patch(accounts::patch_account),
        )
        .route("/v1/allocation", get(allocation::get_allocation))
        .route("/v1/organization", get(organization::get_organization))
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
        .route("/v1/admin/exports/focus", get(finance::export_focus))
        .route(
            "/v1/admin/accounts/{id}/keys",
            get(admin::list_keys).post(admin::add_key),
        )
        .route(
            "/v1/admin/accounts/{id}/keys/{key_id}",
            axum::routing::delete(admin::revoke_key),
        )
        .route(
            "/v1/admin/accounts/{id}/keys/{key_id}/rotate",
            post(admin::rotate_key),
        )
        .route(
            "/v1/accounts/{id}/keys",
            get(admin::list_account_keys).post(admin::add_account_key),
        )
        .route(
            "/v1/accounts/{id}/keys/{key_id}",
            axum::routing::delete(admin::revoke_account_key),
        )
        .route(
            "/v1/accounts/{id}/keys/{key_id}/rotate",
            post(admin::rotate_account_key),
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
        .route("/v1/accounts/{id}/notify", get(notify::get_notify))
        .route(
            "/v1/accounts/{id}/budgets/{budget}",
            put(notify::put_budget).delete(notify::delete_budget),
        )
        .route("/v1/accounts/{id}/alerts", put(notify::put_alerts))
        .route(
            "/v1/admin/accounts/{id}/arrears",
            put(notify::put_arrears).delete(notify::delete_arrears),
        )
        .route("/v1/notifications", get(notify::list_notifications))
        .route("/v1/admin/notify/tick", post(notify::tick))
        // Issue 28: webhook endpoints (webhooks.rs).
        .route(
            "/v1/accounts/{id}/webhooks",
            get(webhooks::list).post(webhooks::create),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}",
            get(webhooks::get)
                .patch(webhooks::patch)
                .delete(webhooks::delete),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}/rotate",
            post(webhooks::rotate),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}/enable",
            post(webhooks::enable),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}/test",
            post(webhooks::test),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}/deliveries",
            get(webhooks::deliveries),
        )
        .route(
            "/v1/accounts/{id}/webhooks/{endpoint}/deliveries/{notification}/resend",
            post(webhooks::resend),
        )
        .route(
            "/v1/admin/webhooks",
            get(webhooks::admin_list).post(webhooks::admin_create),
        )
        .route(
            "/v1/admin/webhooks/{endpoint}",
            axum::routing::delete(webhooks::admin_delete),
        )
        .route(
            "/v1/admin/webhooks/{endpoint}/enable",
            post(webhooks::admin_enable),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            idempotency::layer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::actor_layer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::shard_routing::route,
        ))
        .layer(DefaultBodyLimit::max(limits::MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(limits::json_errors))
        .with_state(state)
}
