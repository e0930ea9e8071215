//! Issue 28: webhook endpoints and their delivery log.
//!
//! - `GET/POST /v1/accounts/{id}/webhooks`: the account's endpoints; a new one (`{url,
//!   event_types?, description?}`) answers with its `secret` (`whsec_...`), shown once.
//! - `GET/PATCH/DELETE /v1/accounts/{id}/webhooks/{endpoint}`: one endpoint; a change of its
//!   `url`, `event_types` or `description`; deleting it (its pending deliveries stop).
//! - `POST .../{endpoint}/rotate`: a new secret, shown once; the previous one keeps signing
//!   for 24 h (deliveries carry both signatures).
//! - `POST .../{endpoint}/enable`: an endpoint disabled after 5 days of failures is enabled;
//!   its pending deliveries go out at once, in order.
//! - `POST .../{endpoint}/test`: a `test` notification of the account (to every endpoint that
//!   takes `test`); answers its id and seq.
//! - `GET .../{endpoint}/deliveries?limit=`: the delivery log, newest first, with attempts.
//! - `POST .../{endpoint}/deliveries/{notification}/resend`: a delivered or failed
//!   notification goes out again.
//! - `GET/POST /v1/admin/webhooks`, `DELETE /v1/admin/webhooks/{endpoint}`, `POST
//!   /v1/admin/webhooks/{endpoint}/enable`: the platform's endpoints (every account's
//!   notifications), admin only.
//!
//! URLs are checked against the operator's address policy ([`AppState::webhook_policy`],
//! `--webhook-allow-cidr`): http or https, public addresses unless allowed. Customer routes
//! take the admin token too; reading needs `ReadNotify`, changing `ManageNotify`.

use crate::auth::{Action, Principal};
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::notify::account_for;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use billing_store::{
    Delivery, EndpointChange, NewEndpoint, WebhookEndpoint, WebhookError, WithSecret,
};
use serde::Deserialize;
use serde_json::{Value, json};

impl From<WebhookError> for ApiError {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::Invalid(m) => ApiError::Unprocessable(m),
            e @ (WebhookError::UnknownEndpoint(_) | WebhookError::UnknownDelivery { .. }) => {
                ApiError::NotFound(e.to_string())
            }
            WebhookError::Store(s) => s.into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    url: String,
    #[serde(default)]
    event_types: Option<Vec<String>>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchBody {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    event_types: Option<Vec<String>>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogQuery {
    #[serde(default)]
    limit: Option<i64>,
}

fn new_endpoint(b: CreateBody) -> NewEndpoint {
    NewEndpoint {
        url: b.url,
        description: b.description,
        event_types: b.event_types,
    }
}

/// `GET /v1/accounts/{id}/webhooks`.
pub async fn list(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ReadNotify).await?;
    let endpoints = s.store.webhooks().list(Some(&account)).await?;
    Ok(Json(json!({ "account": account, "endpoints": endpoints })))
}

/// `POST /v1/accounts/{id}/webhooks`.
pub async fn create(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(b): JsonBody<CreateBody>,
) -> Result<(StatusCode, Json<WithSecret>), ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let b = b?;
    let made = s
        .store
        .webhooks()
        .create(
            Some(&account),
            new_endpoint(b),
            &s.webhook_policy,
            (s.clock)(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// `GET /v1/accounts/{id}/webhooks/{endpoint}`.
pub async fn get(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<Json<WebhookEndpoint>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ReadNotify).await?;
    Ok(Json(s.store.webhooks().get(Some(&account), &id).await?))
}

/// `PATCH /v1/accounts/{id}/webhooks/{endpoint}`.
pub async fn patch(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
    JsonBody(b): JsonBody<PatchBody>,
) -> Result<Json<WebhookEndpoint>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let b = b?;
    let change = EndpointChange {
        url: b.url,
        description: b.description,
        event_types: b.event_types,
    };
    Ok(Json(
        s.store
            .webhooks()
            .update(Some(&account), &id, change, &s.webhook_policy)
            .await?,
    ))
}

/// `DELETE /v1/accounts/{id}/webhooks/{endpoint}`.
pub async fn delete(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    s.store
        .webhooks()
        .delete(Some(&account), &id, (s.clock)())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/accounts/{id}/webhooks/{endpoint}/rotate`.
pub async fn rotate(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<Json<WithSecret>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    Ok(Json(
        s.store
            .webhooks()
            .rotate(Some(&account), &id, (s.clock)())
            .await?,
    ))
}

/// `POST /v1/accounts/{id}/webhooks/{endpoint}/enable`.
pub async fn enable(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    enabled(&s, Some(&account), &id).await
}

async fn enabled(s: &AppState, owner: Option<&str>, id: &str) -> Result<Json<Value>, ApiError> {
    let changed = s.store.webhooks().enable(owner, id, (s.clock)()).await?;
    let endpoint = s.store.webhooks().get(owner, id).await?;
    let mut v = serde_json::to_value(endpoint).map_err(|e| ApiError::Internal(e.to_string()))?;
    v["reenabled"] = json!(changed);
    Ok(Json(v))
}

/// `POST /v1/accounts/{id}/webhooks/{endpoint}/test`.
pub async fn test(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    s.store.webhooks().get(Some(&account), &id).await?;
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|e| ApiError::Internal(e.to_string()))?;
    let published = s
        .store
        .webhooks()
        .send_test(&account, &hex::encode(nonce), (s.clock)())
        .await?
        .ok_or_else(|| ApiError::Conflict("this test event was sent already".into()))?;
    Ok((
        StatusCode::OK,
        Json(json!({
            "account": account,
            "type": "test",
            "notification": published.id,
            "seq": published.seq,
        })),
    ))
}

/// `GET /v1/accounts/{id}/webhooks/{endpoint}/deliveries`.
pub async fn deliveries(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
    Query(q): Query<LogQuery>,
) -> Result<Json<Value>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ReadNotify).await?;
    let limit = q.limit.unwrap_or(100);
    let max = billing_store::DELIVERY_LOG_PAGE_MAX;
    if !(1..=max).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit = {limit}: must be 1 to {max}"
        )));
    }
    let log: Vec<Delivery> = s
        .store
        .webhooks()
        .deliveries(Some(&account), &id, limit)
        .await?;
    Ok(Json(json!({ "endpoint": id, "deliveries": log })))
}

/// `POST /v1/accounts/{id}/webhooks/{endpoint}/deliveries/{notification}/resend`.
pub async fn resend(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id, notification)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let n: i64 = notification.parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "notification {notification:?}: must be a notification id (an integer)"
        ))
    })?;
    let requeued = s
        .store
        .webhooks()
        .resend(Some(&account), &id, n, (s.clock)())
        .await?;
    Ok(Json(json!({
        "endpoint": id,
        "notification": n,
        "requeued": requeued,
    })))
}

/// `GET /v1/admin/webhooks` (admin): the platform's endpoints.
pub async fn admin_list(
    principal: Principal,
    State(s): State<AppState>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let endpoints = s.store.webhooks().list(None).await?;
    Ok(Json(json!({ "endpoints": endpoints })))
}

/// `POST /v1/admin/webhooks` (admin): a platform endpoint.
pub async fn admin_create(
    principal: Principal,
    State(s): State<AppState>,
    JsonBody(b): JsonBody<CreateBody>,
) -> Result<(StatusCode, Json<WithSecret>), ApiError> {
    principal.admin()?;
    let b = b?;
    let made = s
        .store
        .webhooks()
        .create(None, new_endpoint(b), &s.webhook_policy, (s.clock)())
        .await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// `DELETE /v1/admin/webhooks/{endpoint}` (admin).
pub async fn admin_delete(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    principal.admin()?;
    s.store.webhooks().delete(None, &id, (s.clock)()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/admin/webhooks/{endpoint}/enable` (admin).
pub async fn admin_enable(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    enabled(&s, None, &id).await
}
