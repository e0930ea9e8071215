//! API key rotation and revocation, and the audit log (issue 14). See
//! `billing_store::api_keys` for how a revocation reaches every engine at once.

use crate::auth::Principal;
use crate::auth::generate_secret;
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use billing_store::hash_key;
use serde_json::{Value, json};

/// `POST /v1/admin/accounts/{id}/keys`: another key for the account, shown once. The old
/// keys keep working until revoked.
pub async fn add_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let key = generate_secret("gbk_");
    let hash = hash_key(&key);
    if !s
        .store
        .admin()
        .add_api_key(&account, &hash, (s.clock)())
        .await?
    {
        return Err(ApiError::NotFound(format!("no account {account:?}")));
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "account": account,
            "key_id": billing_store::key_id_of(&hash),
            "api_key": key,
        })),
    )
        .into_response())
}

/// `GET /v1/admin/accounts/{id}/keys`: the account's key ids and when each was made.
pub async fn list_keys(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    if !s.store.admin().account_exists(&account).await? {
        return Err(ApiError::NotFound(format!("no account {account:?}")));
    }
    Ok(Json(
        json!({ "account": account, "keys": s.store.admin().api_keys(&account).await? }),
    ))
}

/// `DELETE /v1/admin/accounts/{id}/keys/{key_id}`: the key stops working at once, on every
/// engine (each request looks its key up in the database).
pub async fn revoke_key(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, key_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    principal.admin()?;
    if key_id.len() != 16 || !key_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::BadRequest(format!(
            "key id {key_id:?} is not 16 hex digits (see GET /v1/admin/accounts/{{id}}/keys)"
        )));
    }
    if s.store
        .admin()
        .revoke_api_key(&account, &key_id.to_ascii_lowercase().into(), (s.clock)())
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "account {account:?} has no key {key_id:?}"
        )))
    }
}

/// `GET /v1/admin/audit?after=&limit=`: every admin change (the recorded commands), who made
/// it and when, in order.
pub async fn audit(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let limit = crate::handlers::page_limit(q.limit, 1000)?;
    let entries = s.store.admin().audit(q.after.unwrap_or(0), limit).await?;
    let next = crate::handlers::next_after(&entries, limit, |e| e.seq);
    Ok(Json(json!({ "entries": entries, "next_after": next })))
}
