//! `GET /openapi.json`, generated from the code with utoipa.

use axum::Json;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "gpubill", description = "Billing and metering for GPU rental: ingest, usage, invoices, admin."),
    paths(health, ready, ingest, usage, cost_current, invoices, invoice, create_account, put_pricebook, close, export, dead_letters, adjustments, put_quotas, authorize, extend_hold, release_hold, balance, quota_decisions, put_term, delete_term, list_terms, put_profile, get_profile, put_seller, get_seller),
    components(schemas(crate::handlers::IngestResult, crate::handlers::NewAccount)),
    modifiers(&Bearer)
)]
struct Doc;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(Doc::openapi())
}

// Path descriptions: one stub per route, next to nothing else, so the document lists every
// route with its parameters and answers.

#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "the process is up")))]
#[allow(dead_code)]
fn health() {}

#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "the database answers"), (status = 503, description = "it does not")))]
#[allow(dead_code)]
fn ready() {}

#[utoipa::path(post, path = "/v1/events", security(("bearer" = [])),
    request_body(content = String, description = "one CloudEvent (application/cloudevents+json) or an array of up to 10,000 (application/cloudevents-batch+json, application/json), 10 MiB at most"),
    responses((status = 200, description = "durable; per-event status", body = crate::handlers::IngestResult), (status = 400, description = "malformed body"), (status = 403, description = "customer key"), (status = 413, description = "too large")))]
#[allow(dead_code)]
fn ingest() {}

#[utoipa::path(get, path = "/v1/usage", security(("bearer" = [])), params(crate::usage::UsageQuery),
    responses((status = 200, description = "unit-seconds per bucket and group; next_from when there are more buckets"), (status = 400, description = "bad range or granularity")))]
#[allow(dead_code)]
fn usage() {}

#[utoipa::path(get, path = "/v1/cost/current", security(("bearer" = [])), responses((status = 200, description = "the current period rated so far, shaped like an invoice")))]
#[allow(dead_code)]
fn cost_current() {}

#[utoipa::path(get, path = "/v1/invoices", security(("bearer" = [])), params(crate::handlers::PeriodQuery), responses((status = 200, description = "the caller's issued invoices")))]
#[allow(dead_code)]
fn invoices() {}

#[utoipa::path(get, path = "/v1/invoices/{id}", security(("bearer" = [])), params(("id" = String, Path, description = "invoice id; append .csv for CSV, .html for a printable A4 page, .pdf for that page as PDF"),
        ("lang" = Option<String>, Query, description = ".html and .pdf: en (default) or zh, the labels' language")),
    responses((status = 200, description = "the invoice (JSON of billing-semantics.md section 6 plus id, number, status, issued_at); .html: text/html with the seller's and buyer's profiles; .pdf: application/pdf"),
        (status = 400, description = "lang neither en nor zh"), (status = 404, description = "no such invoice for this account"),
        (status = 503, description = ".pdf: Chromium is not installed on the server (apt-get install chromium), or busy")))]
#[allow(dead_code)]
fn invoice() {}

#[utoipa::path(post, path = "/v1/admin/accounts", security(("bearer" = [])), request_body = crate::handlers::NewAccount,
    responses((status = 201, description = "{\"id\",\"api_key\"}: the key is shown once"), (status = 409, description = "exists")))]
#[allow(dead_code)]
fn create_account() {}

#[utoipa::path(put, path = "/v1/admin/pricebook", security(("bearer" = [])), request_body(content = String, content_type = "application/toml"),
    responses((status = 201, description = "{\"version\": n}"), (status = 422, description = "invalid: the message names the key and value")))]
#[allow(dead_code)]
fn put_pricebook() {}

#[utoipa::path(post, path = "/v1/admin/invoices/close", security(("bearer" = [])), params(crate::handlers::PeriodQuery),
    responses((status = 200, description = "the period's invoices (the same ones when closed again)"), (status = 409, description = "unpriced usage or no price book")))]
#[allow(dead_code)]
fn close() {}

#[utoipa::path(get, path = "/v1/admin/exports/invoices", security(("bearer" = [])), params(crate::handlers::PeriodQuery), responses((status = 200, description = "CSV or JSON lines")))]
#[allow(dead_code)]
fn export() {}

#[utoipa::path(get, path = "/v1/admin/dead-letters", security(("bearer" = [])), params(crate::handlers::PageQuery), responses((status = 200, description = "rejected records with reasons")))]
#[allow(dead_code)]
fn dead_letters() {}

#[utoipa::path(get, path = "/v1/admin/adjustments", security(("bearer" = [])), params(crate::handlers::PeriodQuery), responses((status = 200, description = "late usage for closed periods and the difference it makes")))]
#[allow(dead_code)]
fn adjustments() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/quotas", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = String, content_type = "application/json", description = "{\"prepaid_balance\",\"spend_limit\",\"gpu_hours\":{sku:hours},\"max_concurrent\":{sku:units},\"warn_at\"}, every field optional, decimals as strings"),
    responses((status = 200, description = "the quotas set"), (status = 404, description = "unknown account"), (status = 422, description = "invalid: the message names the field")))]
#[allow(dead_code)]
fn put_quotas() {}

#[utoipa::path(post, path = "/v1/authorize", security(("bearer" = [])),
    request_body(content = String, content_type = "application/json", description = "{\"account\",\"sku\",\"quantity\",\"seconds\",\"lease\"?,\"ttl_seconds\"?}"),
    responses((status = 200, description = "{\"decision\":\"allowed\",\"hold\",\"amount\",\"expires_at\"} or {\"decision\":\"denied\",\"quota\",\"used\",\"requested\",\"limit\"}"),
        (status = 404, description = "unknown account"), (status = 422, description = "bad quantity, seconds, ttl or unknown sku")))]
#[allow(dead_code)]
fn authorize() {}

#[utoipa::path(post, path = "/v1/holds/{id}/extend", security(("bearer" = [])), params(("id" = String, Path, description = "hold id")),
    responses((status = 200, description = "{\"hold\",\"status\",\"expires_at\"}"), (status = 404, description = "unknown hold"), (status = 409, description = "not live")))]
#[allow(dead_code)]
fn extend_hold() {}

#[utoipa::path(post, path = "/v1/holds/{id}/release", security(("bearer" = [])), params(("id" = String, Path, description = "hold id")),
    responses((status = 200, description = "{\"hold\",\"status\":\"released\"}"), (status = 404, description = "unknown hold"), (status = 409, description = "not live")))]
#[allow(dead_code)]
fn release_hold() {}

#[utoipa::path(get, path = "/v1/balance", security(("bearer" = [])), responses((status = 200, description = "prepaid balance, period cost, live holds, available, quotas; packages {id, sku, remaining_unit_seconds, from, to}, credits {id, amount, remaining, from, to}, subscriptions {id, sku, current_cycle, cycle_start, cycle_end, cycles_left, cycles}, sla_compensation_credited, sla_compensation_left (instants in Unix seconds)")))]
#[allow(dead_code)]
fn balance() {}

#[utoipa::path(get, path = "/v1/quota/decisions", security(("bearer" = [])), responses((status = 200, description = "{\"decisions\":[{id, account, quota, period, kind, used, limit, position, at_ms}], \"next_after\"}")))]
#[allow(dead_code)]
fn quota_decisions() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "reservations, discounts, credits, packages or subscriptions"), ("term_id" = String, Path, description = "the term's id (1 to 256 of A-Z a-z 0-9 . _ -); credits, packages and subscriptions take it as their price book `id`")),
    request_body(content = String, content_type = "application/json", description = "the price book entry's fields without `account` and `id`, decimals as strings, instants RFC 3339; e.g. a package {\"sku\",\"hours\",\"from\",\"to\",\"price\"}"),
    responses((status = 200, description = "{\"account\",\"kind\",\"term_id\",\"body\",\"changed\"}: changed false when the same body was set already"),
        (status = 400, description = "invalid: the message names the key and value"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account or kind"), (status = 409, description = "a change to what has started or been consumed, or no price book yet")))]
#[allow(dead_code)]
fn put_term() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "term kind"), ("term_id" = String, Path, description = "term id")),
    responses((status = 200, description = "{\"changed\"}: ended (a started subscription keeps its started cycles); false when ended already"),
        (status = 404, description = "unknown account or term"), (status = 409, description = "started or consumed, or a price book term")))]
#[allow(dead_code)]
fn delete_term() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/terms", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "{\"account\",\"terms\":[{kind, term_id, body, rev, updated_at_ms}]}: the live terms set by commands"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn list_terms() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = String, content_type = "application/json", description = "the buyer's 增值税发票 fields: {\"name\" (名称, required, 1 to 200 characters), \"tax_id\" (纳税人识别号: 15, 17, 18 or 20 of 0-9 A-Z), \"address\", \"phone\", \"bank\" (开户行), \"bank_account\" (账号), \"email\"}; optional fields may be omitted or null; no control characters; no other field"),
    responses((status = 200, description = "{\"account\",\"profile\",\"changed\"}: changed false when the account had this profile already"),
        (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn put_profile() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "{\"account\",\"profile\",\"updated_at_ms\"}: profile null when none was set"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn get_profile() {}

#[utoipa::path(put, path = "/v1/admin/seller", security(("bearer" = [])),
    request_body(content = String, content_type = "application/json", description = "the seller's (the platform's) fields, as an account's profile"),
    responses((status = 200, description = "{\"profile\",\"changed\"}"), (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn put_seller() {}

#[utoipa::path(get, path = "/v1/admin/seller", security(("bearer" = [])),
    responses((status = 200, description = "{\"profile\",\"updated_at_ms\"}: profile null when none was set")))]
#[allow(dead_code)]
fn get_seller() {}
