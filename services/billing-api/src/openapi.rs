//! `GET /openapi.json`, generated from the code with utoipa.
//!
//! One stub per route carries its path, parameters, bodies and answers; [`schemas`] holds the
//! shapes of the JSON the handlers write with `json!` or with types of billing-core and
//! billing-store (which do not depend on utoipa). Those structs are never built: they mirror
//! the JSON field for field (money and quantities are decimal strings), and
//! tests/openapi_client.rs checks real answers against them with every object closed to
//! extra fields, so a field added to an answer and not here fails a test. Every error answer
//! is `{"error", "message"}` ([`Errors`] adds it to each 4xx/5xx, and 401 and 429 to each
//! route taking a bearer token).

use axum::Json;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "gpubill", description = "Billing and metering for GPU rental: ingest, usage, invoices, admin."),
    paths(health, ready, openapi_json, metrics, me, prices, get_pricebook, ingest, usage, cost_current, estimate, invoices, invoice, create_account, patch_account, allocation, organization, list_accounts, put_pricebook, close, export, dead_letters, adjustments, put_quotas, authorize, extend_hold, release_hold, balance, quota_decisions, put_term, delete_term, list_terms, put_profile, get_profile, put_seller, get_seller, topups, refunds, payments, settle, journal, focus, add_key, list_keys, revoke_key, rotate_key, add_account_key, list_account_keys, revoke_account_key, rotate_account_key, audit, get_notify, put_budget, delete_budget, put_alerts, put_arrears, delete_arrears, list_notifications, notify_tick,
        // Issue 28: webhook endpoints (webhooks.rs).
        list_webhooks, create_webhook, get_webhook, patch_webhook, delete_webhook, rotate_webhook, enable_webhook, test_webhook, webhook_deliveries, resend_webhook_delivery, list_platform_webhooks, create_platform_webhook, delete_platform_webhook, enable_platform_webhook),
    components(schemas(crate::handlers::IngestResult, crate::handlers::NewAccount, schemas::Error, schemas::Document)),
    modifiers(&Bearer, &Errors)
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

/// Every 4xx and 5xx answer is the `Error` body (`ApiError` and the `json_errors` middleware
/// write no other); every route taking a bearer token may answer 401 (no or unknown token)
/// and 429 (its key's rate limit, with `Retry-After`).
struct Errors;

impl utoipa::Modify for Errors {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{Content, Ref, RefOr, Response};
        let error = || Content::new(Some(Ref::from_schema_name("Error")));
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                let answers = &mut op.responses.responses;
                if op.security.is_some() {
                    for (status, description) in [
                        ("401", "no bearer token, or one the server does not know"),
                        (
                            "429",
                            "the key's rate limit: retry after Retry-After seconds",
                        ),
                    ] {
                        answers
                            .entry(status.to_string())
                            .or_insert_with(|| RefOr::T(Response::new(description)));
                    }
                }
                for (status, answer) in answers.iter_mut() {
                    if let RefOr::T(answer) = answer
                        && status.as_str() >= "400"
                        && answer.content.is_empty()
                    {
                        answer
                            .content
                            .insert("application/json".to_string(), error());
                    }
                }
            }
        }
    }
}

pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(Doc::openapi())
}

/// The shapes of the API's JSON (`openapi/schemas.rs`).
pub(crate) mod schemas;

use schemas::*;

// Path descriptions: one stub per route, next to nothing else, so the document lists every
// route with its parameters and answers (the test below checks it against the router).

#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "the process is up", body = String, content_type = "text/plain")))]
#[allow(dead_code)]
fn health() {}

#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "the database answers", body = String, content_type = "text/plain"), (status = 503, description = "it does not")))]
#[allow(dead_code)]
fn ready() {}

#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "this document", body = Object)))]
#[allow(dead_code)]
fn openapi_json() {}

#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain"), (status = 404, description = "no metrics recorder installed")))]
#[allow(dead_code)]
fn metrics() {}

#[utoipa::path(post, path = "/v1/events", security(("bearer" = [])),
    request_body(description = "a batch of up to 10,000 CloudEvents, 10 MiB at most; the ingest or the admin token. The same route takes one event as application/cloudevents+json, and under application/json one event (an object) or a batch (an array); only the batch is listed here, as generated clients cannot tell one JSON body from another by content type. It also takes one event in CloudEvents binary content mode (a ce-specversion header, the other attributes in ce-* headers with percent-encoded values, the data alone as the body, content-type naming the data's type, which must be JSON: application/json or a +json type); a binary event that cannot be converted is a rejected event with its reason",
        content = Vec<CloudEvent>, content_type = "application/cloudevents-batch+json"),
    responses((status = 200, description = "durable; per-event status (a record that is not valid JSON is a rejected event, not a 400)", body = crate::handlers::IngestResult),
        (status = 400, description = "unsupported content type, or the body is not an array"), (status = 403, description = "a customer key"),
        (status = 413, description = "more than 10,000 events or 10 MiB"), (status = 503, description = "Kafka mode: the event log did not acknowledge the batch; retry it")))]
#[allow(dead_code)]
fn ingest() {}

#[utoipa::path(get, path = "/v1/usage", security(("bearer" = [])), params(crate::usage::UsageQuery),
    responses((status = 200, description = "unit-seconds per bucket and group; next_from when there are more buckets, next_group_after when there are more groups", body = Usage),
        (status = 400, description = "bad range, granularity, group_by or group_limit"), (status = 403, description = "not a customer key, or its role may not read usage"), (status = 404, description = "`account` outside the key's scope or unknown (the same answer)")))]
#[allow(dead_code)]
fn usage() {}

#[utoipa::path(get, path = "/v1/cost/current", security(("bearer" = [])), params(crate::finance::KnownAtQuery, crate::query::RegionQuery, crate::query::AccountQuery),
    responses((status = 200, description = "the current period rated so far, shaped like an invoice; with as_known_at, what it said then from the events ingested by then", body = CostCurrent),
        (status = 400, description = "as_known_at not RFC 3339 or in the future"), (status = 403, description = "not a customer key, or its role may not read cost"), (status = 404, description = "`account` outside the key's scope or unknown (the same answer)"), (status = 409, description = "no price book applies"),
        (status = 422, description = "a region the price book does not name")))]
#[allow(dead_code)]
fn cost_current() {}

#[utoipa::path(post, path = "/v1/estimate", security(("bearer" = [])), request_body = EstimateRequest,
    responses((status = 200, description = "what the lease would cost under the account's terms, per period and summed (see basis); nothing is written", body = EstimateAnswer),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a customer key whose role may not read cost"), (status = 404, description = "a customer key: `account` outside its scope or unknown (the same answer)"),
        (status = 409, description = "no price book applies at start"), (status = 422, description = "a bad field: the message starts with its name (account, sku, quantity, class, region, start, duration_seconds)")))]
#[allow(dead_code)]
fn estimate() {}

#[utoipa::path(get, path = "/v1/invoices", security(("bearer" = [])), params(("period" = Option<String>, Query, description = "`YYYY-MM`: only this period's"), crate::query::AccountQuery),
    responses((status = 200, description = "the caller's invoices (kind invoice: status issued|paid|overdue, adjustments, amount_due, paid, credit_note) and credit notes (kind credit_note: number, invoice_id, references, amount), by period, invoices first, then number", body = Vec<Document>),
        (status = 403, description = "not a customer key, or its role may not read invoices"), (status = 404, description = "`account` outside the key's scope or unknown (the same answer)")))]
#[allow(dead_code)]
fn invoices() {}

#[utoipa::path(get, path = "/v1/invoices/{id}", security(("bearer" = [])), params(("id" = String, Path, description = "invoice or credit note id; append .csv for CSV, .html for a printable A4 page, .pdf for that page as PDF"),
        ("lang" = Option<String>, Query, description = ".html and .pdf: en (default) or zh, the labels' language"), crate::query::AccountQuery),
    responses((status = 200, description = "the invoice (JSON of billing-semantics.md section 6 plus kind, id, number, status, issued_at, amount_due, paid, adjustments) or credit note; .csv: text/csv; .html: text/html with the seller's and buyer's profiles; .pdf: application/pdf",
            content((Document = "application/json"), (String = "text/csv"), (String = "text/html"), (inline(Binary) = "application/pdf"))),
        (status = 400, description = "lang neither en nor zh"), (status = 403, description = "not a customer key, or its role may not read invoices"), (status = 404, description = "no such invoice for the account, or `account` outside the key's scope or unknown"),
        (status = 503, description = ".pdf: Chromium is not installed on the server (apt-get install chromium), or busy")))]
#[allow(dead_code)]
fn invoice() {}

#[utoipa::path(post, path = "/v1/admin/accounts", security(("bearer" = [])), request_body = crate::handlers::NewAccount,
    responses((status = 201, description = "created: the key is shown once", body = AccountCreated), (status = 400, description = "bad id"), (status = 403, description = "not the admin token"), (status = 409, description = "exists")))]
#[allow(dead_code)]
fn create_account() {}

#[utoipa::path(patch, path = "/v1/admin/accounts/{id}", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body = crate::accounts::AccountMove,
    responses((status = 200, description = "moved for every period not yet closed (an `accounts` term set by command; closed periods keep their payer)", body = AccountMoved),
        (status = 400, description = "pays = parent without a parent, or a bad body"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account or parent"),
        (status = 409, description = "a cycle, more than 8 accounts root to leaf, or a discount or credit left on an account that would no longer pay for itself: the message names it")))]
#[allow(dead_code)]
fn patch_account() {}

#[utoipa::path(get, path = "/v1/allocation", security(("bearer" = [])), params(crate::allocation::AllocationQuery),
    responses((status = 200, description = "the allocation of the invoice holding the account's cost (its payer's): issued for a closed period, provisional for an open one; a customer key reads an account within its scope (`account`, default its own) and sees the rows of the accounts its scope holds (a paid-for account's key its own rows, never a sibling's), the invoice total only when its scope holds the payer", body = AllocationReport),
        (status = 400, description = "bad period or group_by, or no account= with the admin token"), (status = 403, description = "not a customer key or the admin token"),
        (status = 403, description = "a customer key whose role may not read the allocation"), (status = 404, description = "an account outside the key's scope or unknown, or no invoice holds the cost"), (status = 409, description = "an issued invoice without allocation (the price book had no allocation_tag), or no price book yet")))]
#[allow(dead_code)]
fn allocation() {}

#[utoipa::path(get, path = "/v1/organization", security(("bearer" = [])), params(crate::organization::OrganizationQuery),
    responses((status = 200, description = "the accounts of the subtree rooted at `account` (default the key's own; with the admin token required), each with its own allocated cost to date in the period (the sum of its allocation rows, as `GET /v1/allocation` answers them), its subtree's cost and its budget (its `spend_limit`, over its subtree), and the cost by (account, project); `parent` is null at the root: nothing above the scope is shown", body = OrganizationReport),
        (status = 400, description = "bad period, or no account= with the admin token"), (status = 403, description = "not a customer key or the admin token, or a viewer or member key (only owner and finance keys read the organization; a member reads its own cost with GET /v1/allocation)"),
        (status = 404, description = "an account outside the key's scope or unknown"), (status = 409, description = "an issued invoice without allocation (the price book had no allocation_tag), or no price book yet")))]
#[allow(dead_code)]
fn organization() {}

#[utoipa::path(get, path = "/v1/admin/accounts", security(("bearer" = [])), params(crate::handlers::AccountsQuery),
    responses((status = 200, description = "registered accounts in id order with their quotas", body = AccountList), (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn list_accounts() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = KeyRequest, description = "may be empty: an owner key"),
    responses((status = 201, description = "another key for the account with its role, shown once; the old keys keep working until revoked", body = KeyCreated),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "not the admin token"), (status = 404, description = "no such account"),
        (status = 422, description = "a role other than owner, finance, viewer, member")))]
#[allow(dead_code)]
fn add_key() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "the account's keys, revoked ones included: id, role, when and by whom made, when revoked", body = KeyList),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account")))]
#[allow(dead_code)]
fn list_keys() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/keys/{key_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("key_id" = String, Path, description = "16 hex digits, from the key list")),
    responses((status = 204, description = "revoked: the key stops working at once, on every engine; it stays listed with revoked_at"), (status = 400, description = "key_id not 16 hex digits"),
        (status = 403, description = "not the admin token"), (status = 404, description = "the account has no such live key")))]
#[allow(dead_code)]
fn revoke_key() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/keys/{key_id}/rotate", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("key_id" = String, Path, description = "16 hex digits, from the key list")),
    responses((status = 201, description = "a new key of the old one's role and account, shown once; the old key revoked in the same transaction", body = KeyRotated), (status = 400, description = "key_id not 16 hex digits"),
        (status = 403, description = "not the admin token"), (status = 404, description = "the account has no such live key")))]
#[allow(dead_code)]
fn rotate_key() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id: the key's own account or one below it")),
    request_body(content = KeyRequest, description = "may be empty: an owner key"),
    responses((status = 201, description = "a key for the account with its role, shown once (the admin token, or an owner key whose scope holds the account; owner is the top role, so it may issue any)", body = KeyCreated),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a customer key that is not an owner's"),
        (status = 404, description = "unknown account, or one outside the key's scope (the same answer)"), (status = 422, description = "a role other than owner, finance, viewer, member")))]
#[allow(dead_code)]
fn add_account_key() {}

#[utoipa::path(get, path = "/v1/accounts/{id}/keys", security(("bearer" = [])), params(("id" = String, Path, description = "account id: the key's own account or one below it")),
    responses((status = 200, description = "the account's keys, revoked ones included: id, role, when and by whom made, when revoked", body = KeyList),
        (status = 403, description = "the ingest token, or a customer key that is not an owner's"), (status = 404, description = "unknown account, or one outside the key's scope (the same answer)")))]
#[allow(dead_code)]
fn list_account_keys() {}

#[utoipa::path(delete, path = "/v1/accounts/{id}/keys/{key_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("key_id" = String, Path, description = "16 hex digits, from the key list")),
    responses((status = 204, description = "revoked: the key stops working at once, on every engine; it stays listed with revoked_at"), (status = 400, description = "key_id not 16 hex digits"),
        (status = 403, description = "the ingest token, or a customer key that is not an owner's"), (status = 404, description = "unknown account, one outside the key's scope, or no such live key")))]
#[allow(dead_code)]
fn revoke_account_key() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/keys/{key_id}/rotate", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("key_id" = String, Path, description = "16 hex digits, from the key list")),
    responses((status = 201, description = "a new key of the old one's role and account, shown once; the old key revoked in the same transaction", body = KeyRotated), (status = 400, description = "key_id not 16 hex digits"),
        (status = 403, description = "the ingest token, or a customer key that is not an owner's"), (status = 404, description = "unknown account, one outside the key's scope, or no such live key")))]
#[allow(dead_code)]
fn rotate_account_key() {}

const NOTIFY_SCOPE: &str =
    "account id: the key's own account or one below it (the admin token: any)";

#[utoipa::path(get, path = "/v1/accounts/{id}/notify", security(("bearer" = [])), params(("id" = String, Path, description = NOTIFY_SCOPE)),
    responses((status = 200, description = "the account's budgets, alerts and arrears policy, what each rule remembers (thresholds crossed, what blocks authorizations) and the arrears step due next", body = NotifyView),
        (status = 403, description = "the ingest token"), (status = 404, description = "unknown account, or one outside the key's scope (the same answer)")))]
#[allow(dead_code)]
fn get_notify() {}

#[utoipa::path(put, path = "/v1/accounts/{id}/budgets/{budget}", security(("bearer" = [])),
    params(("id" = String, Path, description = NOTIFY_SCOPE), ("budget" = String, Path, description = "the budget's id (1 to 64 of A-Z a-z 0-9 . _ -)")),
    request_body(content = BudgetRequest),
    responses((status = 200, description = "set (created or replaced): evaluated with every batch from now on", body = BudgetSet),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, or one outside the key's scope"), (status = 422, description = "a field out of range: the message names it (thresholds[i], amount, action, scope)")))]
#[allow(dead_code)]
fn put_budget() {}

#[utoipa::path(delete, path = "/v1/accounts/{id}/budgets/{budget}", security(("bearer" = [])),
    params(("id" = String, Path, description = NOTIFY_SCOPE), ("budget" = String, Path, description = "the budget's id")),
    responses((status = 204, description = "removed"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, one outside the key's scope, or no such budget")))]
#[allow(dead_code)]
fn delete_budget() {}

#[utoipa::path(put, path = "/v1/accounts/{id}/alerts", security(("bearer" = [])), params(("id" = String, Path, description = NOTIFY_SCOPE)),
    request_body(content = AlertsRequest),
    responses((status = 200, description = "the account's settings after the change", body = NotifySettings),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, or one outside the key's scope"), (status = 422, description = "a field out of range: the message names it")))]
#[allow(dead_code)]
fn put_alerts() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/arrears", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = ArrearsPolicy),
    responses((status = 200, description = "the arrears sequence is on for the account: arrears.started when its balance falls below zero or an invoice is overdue, a stop after the grace, a release after the further delay, cleared when paid", body = ArrearsSet),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account"), (status = 422, description = "a delay out of range: the message names it")))]
#[allow(dead_code)]
fn put_arrears() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/arrears", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 204, description = "the arrears sequence is off for the account"), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn delete_arrears() {}

#[utoipa::path(get, path = "/v1/notifications", security(("bearer" = [])),
    params(("account" = Option<String>, Query, description = "a key: its account (default) or one below it; the admin: one account (default: all)"),
        ("after" = Option<i64>, Query, description = "one account's: a seq; all accounts': an outbox id"), ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "notifications oldest first", body = NotificationList),
        (status = 400, description = "bad limit"), (status = 404, description = "an account outside the key's scope")))]
#[allow(dead_code)]
fn list_notifications() {}

#[utoipa::path(post, path = "/v1/admin/notify/tick", security(("bearer" = [])),
    responses((status = 200, description = "every account's arrears steps, balance alerts and reminders evaluated at the clock (serve does it every --notify-tick-seconds)", body = Ticked),
        (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn notify_tick() {}

#[utoipa::path(get, path = "/v1/admin/audit", security(("bearer" = [])), params(("after" = Option<i64>, Query, description = "a seq: the entries after it"), ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "every admin change (the recorded commands), who made it and when, in order", body = AuditLog),
        (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn audit() {}

#[utoipa::path(put, path = "/v1/admin/pricebook", security(("bearer" = [])),
    request_body(content = inline(Binary), content_type = "application/toml", description = "a whole price book in TOML, UTF-8 (see examples/pricebook.toml and schemas/pricebook.schema.json)"),
    responses((status = 201, description = "stored as a new version", body = PriceBookVersion), (status = 400, description = "not UTF-8"), (status = 403, description = "not the admin token"), (status = 422, description = "invalid: the message names the key and value")))]
#[allow(dead_code)]
fn put_pricebook() {}

#[utoipa::path(get, path = "/v1/me", security(("bearer" = [])),
    responses((status = 200, description = "who the bearer token is: its role, a customer key's account and its name (key id); any token may ask", body = Me)))]
#[allow(dead_code)]
fn me() {}

#[utoipa::path(get, path = "/v1/prices", security(("bearer" = [])), params(crate::catalog::PricesQuery),
    responses((status = 200, description = "the current price of every sku (on-demand tiers, off-peak rates, spot price now, minimum, lease-state rates) and of egress, from the price book version rating the open period: the home region's at the top level, every other region's in `regions` in its own currency", body = PriceList),
        (status = 403, description = "the ingest token"), (status = 404, description = "a customer key: `account` outside its scope or unknown"), (status = 409, description = "no price book applies now")))]
#[allow(dead_code)]
fn prices() {}

#[utoipa::path(get, path = "/v1/admin/pricebook", security(("bearer" = [])), params(crate::catalog::VersionQuery),
    responses((status = 200, description = "the version as uploaded, byte for byte; its metadata in the headers",
            content((inline(Binary) = "application/toml")),
            headers(("x-pricebook-version" = i64, description = "the version"),
                ("x-uploaded-at" = String, description = "when it was uploaded, RFC 3339"),
                ("x-effective-from" = String, description = "its effective_from, RFC 3339 (only when it has one)"),
                ("x-content-sha256" = String, description = "SHA-256 of the body, hex"),
                ("etag" = String, description = "the same SHA-256, quoted"))),
        (status = 400, description = "version is not a positive whole number"), (status = 403, description = "not the admin token"),
        (status = 404, description = "no such version, or no price book yet")))]
#[allow(dead_code)]
fn get_pricebook() {}

#[utoipa::path(post, path = "/v1/admin/invoices/close", security(("bearer" = [])), params(("period" = String, Query, description = "`YYYY-MM`")),
    responses((status = 200, description = "the period's invoices (the same ones when closed again)", body = Vec<IssuedInvoice>), (status = 400, description = "no or bad period"),
        (status = 403, description = "not the admin token"), (status = 409, description = "unpriced usage, no price book, or the period has not ended")))]
#[allow(dead_code)]
fn close() {}

#[utoipa::path(get, path = "/v1/admin/exports/invoices", security(("bearer" = [])),
    params(("period" = String, Query, description = "`YYYY-MM`"), ("format" = Option<String>, Query, description = "`csv` or `jsonl` (default)")),
    responses((status = 200, description = "the period's invoices and credit notes: CSV, one row per line, total and adjustment; or JSON lines, one document each",
            content((String = "text/csv"), (String = "application/jsonl"))),
        (status = 400, description = "bad period or format"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn export() {}

#[utoipa::path(get, path = "/v1/admin/dead-letters", security(("bearer" = [])), params(crate::handlers::PageQuery),
    responses((status = 200, description = "{\"dead_letters\": [rejected records with reasons], \"next_after\"}", body = Object), (status = 400, description = "bad limit"), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn dead_letters() {}

#[utoipa::path(get, path = "/v1/admin/adjustments", security(("bearer" = [])), params(crate::finance::AdjustmentsQuery),
    responses((status = 200, description = "{\"pending_adjustments\": [...]}: what the next close will adjust: per account and closed period, the effective and recomputed totals and the adjustment lines", body = Object),
        (status = 403, description = "not the admin token"), (status = 409, description = "the period is not closed, or no price book")))]
#[allow(dead_code)]
fn adjustments() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/quotas", security(("bearer" = [])), params(("id" = String, Path, description = "account id"), crate::query::RegionQuery),
    request_body = Quotas,
    responses((status = 200, description = "the quotas set", body = Quotas), (status = 400, description = "not a quotas object"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account"), (status = 422, description = "invalid: the message names the field, or a region the price book does not name")))]
#[allow(dead_code)]
fn put_quotas() {}

#[utoipa::path(post, path = "/v1/authorize", security(("bearer" = [])), request_body = AuthorizeRequest,
    responses((status = 200, description = "allowed with a hold, or denied; the admin or ingest token for any account, an owner or member customer key for an account within its scope (issue 27)", body = Authorization), (status = 400, description = "not JSON"), (status = 403, description = "a customer key whose role may not spend"),
        (status = 404, description = "unknown account, or one outside the customer key's scope (the same answer)"), (status = 409, description = "no price book"), (status = 422, description = "bad quantity, seconds, ttl or unknown sku")))]
#[allow(dead_code)]
fn authorize() {}

#[utoipa::path(post, path = "/v1/holds/{id}/extend", security(("bearer" = [])), params(("id" = String, Path, description = "hold id"), crate::query::AccountQuery),
    request_body(content = ExtendHold, description = "may be empty"),
    responses((status = 200, description = "extended", body = HoldState), (status = 403, description = "a customer key whose role may not spend"), (status = 404, description = "unknown hold (a customer key: one of another account than `account`, default its own), or `account` outside the key's scope"), (status = 409, description = "not live"), (status = 422, description = "bad ttl_seconds")))]
#[allow(dead_code)]
fn extend_hold() {}

#[utoipa::path(post, path = "/v1/holds/{id}/release", security(("bearer" = [])), params(("id" = String, Path, description = "hold id"), crate::query::AccountQuery),
    responses((status = 200, description = "released", body = HoldState), (status = 403, description = "a customer key whose role may not spend"), (status = 404, description = "unknown hold (a customer key: one of another account than `account`, default its own), or `account` outside the key's scope"), (status = 409, description = "not live")))]
#[allow(dead_code)]
fn release_hold() {}

#[utoipa::path(get, path = "/v1/balance", security(("bearer" = [])), params(("account" = Option<String>, Query, description = "the admin token names the account; a customer key reads its own or one within its scope"), crate::query::RegionQuery),
    responses((status = 200, description = "wallet {balance, outstanding, movements [{seq, kind, amount, reference, document_id, at}]}, prepaid balance, period cost, live holds, available, quotas; packages {id, sku, remaining_unit_seconds, from, to}, credits {id, amount, remaining, from, to}, subscriptions {id, sku, current_cycle, cycle_start, cycle_end, cycles_left, cycles}, sla_compensation_credited, sla_compensation_left (instants RFC 3339, like every date of the API)", body = Object),
        (status = 400, description = "the admin token without account"), (status = 403, description = "the ingest token, or a customer key whose role may not read the wallet"), (status = 404, description = "unknown account, or one outside the customer key's scope (the same answer)"),
        (status = 422, description = "a region the price book does not name")))]
#[allow(dead_code)]
fn balance() {}

#[utoipa::path(get, path = "/v1/quota/decisions", security(("bearer" = [])),
    params(("account" = Option<String>, Query, description = "admin: one account; a customer key: an account within its scope (default its own)"), ("quota" = Option<String>, Query, description = "admin: one quota"),
        ("kind" = Option<String>, Query, description = "warn, limit or clear"), ("after" = Option<i64>, Query, description = "a seq: the decisions after it"),
        ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "{\"decisions\":[{id, account, node (the node whose limit moved: the account; a spend_limit of an account with sub-accounts measures its subtree, so a child's usage moves its ancestors' decisions), region (a region's billing domain; absent: home), quota, period, kind, used, limit, position, at_ms}], \"next_after\"}: oldest first; a customer key reads its own", body = Object),
        (status = 400, description = "bad kind or limit"), (status = 403, description = "the ingest token, or a customer key whose role may not read cost"), (status = 404, description = "a customer key: `account` outside its scope or unknown")))]
#[allow(dead_code)]
fn quota_decisions() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "reservations, discounts, credits, packages, subscriptions, charges or accounts (an account's settings: `{\"timezone\"}`, term id = the account id; 409 once the account has an invoice)"), ("term_id" = String, Path, description = "the term's id (1 to 256 of A-Z a-z 0-9 . _ -); credits, packages, subscriptions and charges take it as their price book `id`")),
    request_body(content = Object, description = "the price book entry's fields without `account` and `id`, decimals as strings, instants RFC 3339; e.g. a package {\"sku\",\"hours\",\"from\",\"to\",\"price\"}, a one-off charge {\"description\",\"amount\",\"at\"} (amount positive), a scoped discount {\"percent\",\"skus\",\"components\",\"from\",\"to\",\"cap\"} (no `id`)"),
    responses((status = 200, description = "changed false when the same body was set already", body = TermSet),
        (status = 400, description = "invalid: the message names the key and value"), (status = 403, description = "not the admin token"),
        (status = 404, description = "unknown account or kind"), (status = 409, description = "a change to what has started or been consumed (a charge of a closed period), or no price book yet")))]
#[allow(dead_code)]
fn put_term() {}

#[utoipa::path(delete, path = "/v1/admin/accounts/{id}/terms/{kind}/{term_id}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id"), ("kind" = String, Path, description = "term kind"), ("term_id" = String, Path, description = "term id")),
    responses((status = 200, description = "ended (a started subscription keeps its started cycles); changed false when ended already", body = TermSet),
        (status = 403, description = "not the admin token"), (status = 404, description = "unknown account or term"), (status = 409, description = "started or consumed (a charge of a closed period), or a price book term")))]
#[allow(dead_code)]
fn delete_term() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/terms", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "{\"account\",\"terms\":[{kind, term_id, body, rev, updated_at_ms}]}: the live terms set by commands", body = Object),
        (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn list_terms() {}

#[utoipa::path(put, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = Profile, description = "the buyer's 增值税发票 fields"),
    responses((status = 200, description = "changed false when the account had this profile already", body = ProfileSet),
        (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account"),
        (status = 413, description = "too large")))]
#[allow(dead_code)]
fn put_profile() {}

#[utoipa::path(get, path = "/v1/admin/accounts/{id}/profile", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    responses((status = 200, description = "profile null when none was set", body = ProfileShown), (status = 403, description = "not the admin token"), (status = 404, description = "unknown account")))]
#[allow(dead_code)]
fn get_profile() {}

#[utoipa::path(put, path = "/v1/admin/seller", security(("bearer" = [])),
    request_body(content = Profile, description = "the seller's (the platform's) fields, as an account's profile"),
    responses((status = 200, description = "changed false when it was set so already", body = ProfileSet), (status = 400, description = "invalid: the message names the field; nothing is stored"), (status = 403, description = "not the admin token"),
        (status = 413, description = "too large")))]
#[allow(dead_code)]
fn put_seller() {}

#[utoipa::path(get, path = "/v1/admin/seller", security(("bearer" = [])),
    responses((status = 200, description = "profile null when none was set", body = ProfileShown), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn get_seller() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/topups", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = MoneyMovement, example = json!({"amount": "100.00", "reference": "wire-1"})),
    responses((status = 201, description = "credited; `settled`: the unpaid invoices it paid, oldest first (unless serve's --no-topup-settlement)", body = MovementResult), (status = 200, description = "the same top-up again (created false)", body = MovementResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account"), (status = 409, description = "the reference was used with another amount"),
        (status = 422, description = "`region` is not a region of the price book, or `currency` is not the wallet's")))]
#[allow(dead_code)]
fn topups() {}

#[utoipa::path(post, path = "/v1/admin/accounts/{id}/refunds", security(("bearer" = [])), params(("id" = String, Path, description = "account id")),
    request_body(content = MoneyMovement, description = "as for top-ups"),
    responses((status = 201, description = "refunded", body = MovementResult), (status = 200, description = "the same refund again (created false)", body = MovementResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such account"), (status = 409, description = "more than the balance, or the reference used otherwise")))]
#[allow(dead_code)]
fn refunds() {}

#[utoipa::path(post, path = "/v1/admin/invoices/{id}/payments", security(("bearer" = [])), params(("id" = String, Path, description = "invoice id")),
    request_body(content = NewPayment, example = json!({"amount": "20.00", "reference": "bank-1"})),
    responses((status = 201, description = "recorded", body = PaymentResult), (status = 200, description = "the same payment again (created false)", body = PaymentResult), (status = 400, description = "bad amount or reference"),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such invoice"), (status = 409, description = "paid already, more than owed, or the reference used otherwise")))]
#[allow(dead_code)]
fn payments() {}

#[utoipa::path(post, path = "/v1/admin/invoices/{id}/settle", security(("bearer" = [])), params(("id" = String, Path, description = "invoice id")),
    responses((status = 201, description = "paid from the account's wallet as far as its balance goes (a `settlement` movement)", body = SettleResult),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such invoice"), (status = 409, description = "paid already, or nothing in the wallet"),
        (status = 422, description = "a credit note: credited to the wallet, not paid")))]
#[allow(dead_code)]
fn settle() {}

#[utoipa::path(get, path = "/v1/admin/exports/journal", security(("bearer" = [])),
    params(("period" = String, Query, description = "`YYYY-MM`, closed"), ("format" = Option<String>, Query, description = "`csv` or `jsonl` (default)")),
    responses((status = 200, description = "double-entry lines {document, reference, date, customer, account, debit, credit, memo} as CSV or JSON lines, every document balanced",
            content((String = "text/csv"), (String = "application/jsonl"))),
        (status = 400, description = "bad period or format"), (status = 403, description = "not the admin token"), (status = 409, description = "the period is not closed")))]
#[allow(dead_code)]
fn journal() {}

#[utoipa::path(get, path = "/v1/admin/exports/focus", security(("bearer" = [])),
    params(("period" = String, Query, description = "`YYYY-MM`, closed")),
    responses((status = 200, description = "the period's invoices as a FinOps FOCUS 1.0 CSV (the columns focus-validator 1.0.0 checks, its preview names too, InvoiceId and x_Component): one row per invoice line, or per allocation row's line when the invoice has an allocation (SubAccountId its account, Tags {\"<allocation_tag>\": tag}), then discount and credit (ChargeCategory Credit, negative), tax (Tax) and adjustment lines (Adjustment, ChargeClass Correction); each invoice's BilledCost adds up to its total plus its adjustments",
            content((String = "text/csv"))),
        (status = 400, description = "bad period"), (status = 403, description = "not the admin token"), (status = 409, description = "the period is not closed")))]
#[allow(dead_code)]
fn focus() {}

// Issue 28: webhook endpoints (webhooks.rs).

#[utoipa::path(get, path = "/v1/accounts/{id}/webhooks", security(("bearer" = [])), params(("id" = String, Path, description = "account id: the key's own account or one below it")),
    responses((status = 200, description = "the account's live endpoints, oldest first (never their secrets)", body = WebhookEndpointList),
        (status = 403, description = "the ingest token"), (status = 404, description = "unknown account, or one outside the key's scope (the same answer)")))]
#[allow(dead_code)]
fn list_webhooks() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/webhooks", security(("bearer" = [])), params(("id" = String, Path, description = "account id: the key's own account or one below it")),
    request_body(content = WebhookEndpointRequest),
    responses((status = 201, description = "the endpoint with its secret, shown once", body = WebhookEndpointWithSecret),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, or one outside the key's scope (the same answer)"),
        (status = 422, description = "the field named is wrong: url (not http or https, a private or otherwise non-public address the operator did not allow, a host that does not resolve), event_types (an unknown type, with the known ones), description (too long)")))]
#[allow(dead_code)]
fn create_webhook() {}

#[utoipa::path(get, path = "/v1/accounts/{id}/webhooks/{endpoint}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    responses((status = 200, description = "the endpoint", body = WebhookEndpoint),
        (status = 403, description = "the ingest token"), (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn get_webhook() {}

#[utoipa::path(patch, path = "/v1/accounts/{id}/webhooks/{endpoint}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    request_body(content = WebhookEndpointChange),
    responses((status = 200, description = "the endpoint changed", body = WebhookEndpoint),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account"),
        (status = 422, description = "the field named is wrong (url, event_types, description)")))]
#[allow(dead_code)]
fn patch_webhook() {}

#[utoipa::path(delete, path = "/v1/accounts/{id}/webhooks/{endpoint}", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    responses((status = 204, description = "deleted: its pending deliveries are not attempted any more; its log stays"),
        (status = 403, description = "the ingest token, or a viewer key"), (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn delete_webhook() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/webhooks/{endpoint}/rotate", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    responses((status = 200, description = "a new secret, shown once; the previous one keeps signing for 24 h (deliveries carry both signatures)", body = WebhookEndpointWithSecret),
        (status = 403, description = "the ingest token, or a viewer key"), (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn rotate_webhook() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/webhooks/{endpoint}/enable", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    responses((status = 200, description = "enabled: its pending deliveries go out at once, in order, with fresh schedules", body = WebhookEndpointEnabled),
        (status = 403, description = "the ingest token, or a viewer key"), (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn enable_webhook() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/webhooks/{endpoint}/test", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_...")),
    responses((status = 200, description = "a `test` notification of the account, written: every endpoint of the account (and the platform's) that takes `test` receives it", body = WebhookTestSent),
        (status = 403, description = "the ingest token, or a viewer key"), (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn test_webhook() {}

#[utoipa::path(get, path = "/v1/accounts/{id}/webhooks/{endpoint}/deliveries", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_..."), ("limit" = Option<i64>, Query, description = "1 to 1000 (default 100)")),
    responses((status = 200, description = "the delivery log: deliveries newest first, each with its status and attempts (status code or error, latency)", body = WebhookDeliveryLog),
        (status = 400, description = "limit out of range"), (status = 403, description = "the ingest token"),
        (status = 404, description = "unknown account, one outside the key's scope, or no such endpoint of the account")))]
#[allow(dead_code)]
fn webhook_deliveries() {}

#[utoipa::path(post, path = "/v1/accounts/{id}/webhooks/{endpoint}/deliveries/{notification}/resend", security(("bearer" = [])),
    params(("id" = String, Path, description = "account id: the key's own account or one below it"), ("endpoint" = String, Path, description = "ep_..."), ("notification" = i64, Path, description = "the notification's id, from the delivery log")),
    responses((status = 200, description = "a delivered or failed delivery is pending again, due now, with a fresh schedule, in its place in the endpoint's order (requeued false: it was pending)", body = WebhookResent),
        (status = 400, description = "notification not an integer"), (status = 403, description = "the ingest token, or a viewer key"),
        (status = 404, description = "unknown account, one outside the key's scope, no such endpoint, or no delivery of that notification to it")))]
#[allow(dead_code)]
fn resend_webhook_delivery() {}

#[utoipa::path(get, path = "/v1/admin/webhooks", security(("bearer" = [])),
    responses((status = 200, description = "the platform's endpoints (every account's notifications)", body = PlatformWebhookList), (status = 403, description = "not the admin token")))]
#[allow(dead_code)]
fn list_platform_webhooks() {}

#[utoipa::path(post, path = "/v1/admin/webhooks", security(("bearer" = [])), request_body(content = WebhookEndpointRequest),
    responses((status = 201, description = "a platform endpoint with its secret, shown once", body = WebhookEndpointWithSecret),
        (status = 400, description = "not JSON, or a field the body does not take"), (status = 403, description = "not the admin token"),
        (status = 422, description = "the field named is wrong (url, event_types, description)")))]
#[allow(dead_code)]
fn create_platform_webhook() {}

#[utoipa::path(delete, path = "/v1/admin/webhooks/{endpoint}", security(("bearer" = [])), params(("endpoint" = String, Path, description = "ep_...")),
    responses((status = 204, description = "deleted"), (status = 403, description = "not the admin token"), (status = 404, description = "no such platform endpoint")))]
#[allow(dead_code)]
fn delete_platform_webhook() {}

#[utoipa::path(post, path = "/v1/admin/webhooks/{endpoint}/enable", security(("bearer" = [])), params(("endpoint" = String, Path, description = "ep_...")),
    responses((status = 200, description = "enabled: its pending deliveries go out at once, in order", body = WebhookEndpointEnabled),
        (status = 403, description = "not the admin token"), (status = 404, description = "no such platform endpoint")))]
#[allow(dead_code)]
fn enable_platform_webhook() {}

#[cfg(test)]
mod tests;
