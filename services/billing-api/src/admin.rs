//! API keys: issue (with a role), list, rotate and revoke (issues 14 and 27), and the audit
//! log. See `billing_store::api_keys` for how a revocation reaches every engine at once. The
//! routes come twice: under `/v1/admin/accounts/{id}/keys` for the admin token only, and
//! under `/v1/accounts/{id}/keys` for the admin token or an owner key whose scope holds the
//! account (a key of another role: 403; an account outside the scope: 404, as an unknown one).
//! Every change is a command, recorded with its actor (`admin`, `key:<key id>`) and kept as
//! the new key's `created_by`.

use crate::auth::{Action, Principal, Role, generate_secret};
use crate::error::ApiError;
use crate::handlers::PageQuery;
use crate::json_body::JsonBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use billing_store::{ApiKeyId, NewKey, hash_key};
use serde_json::{Value, json};

/// The body of a key issue: its role (default owner).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeyBody {
    #[serde(default)]
    role: Option<String>,
}

/// Where a key route was called: the admin's (`/v1/admin/accounts/{id}/keys...`, the admin
/// token only) or the customers' (`/v1/accounts/{id}/keys...`, the admin token or an owner key
/// whose scope holds the account; issue 27).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Admin,
    Customer,
}

/// Whether the caller may manage `account`'s keys on this route; the 404 it answers when the
/// account is unknown, or (a customer key) outside its scope, in the same words; a 403 for a
/// key that is not an owner's.
async fn may_manage(
    via: Via,
    principal: &Principal,
    s: &AppState,
    account: &str,
) -> Result<(), ApiError> {
    let missing = || match via {
        Via::Admin => ApiError::NotFound(format!("no account {account:?}")),
        Via::Customer => crate::auth::unknown_account(account),
    };
    match (via, principal) {
        (Via::Admin, _) => principal.admin()?,
        (Via::Customer, Principal::Admin) => {}
        (Via::Customer, Principal::Customer(_)) => {
            principal
                .scoped(s, Some(account), Action::ManageKeys)
                .await?;
        }
        (Via::Customer, Principal::Ingest) => {
            return Err(ApiError::Forbidden(
                "keys are managed with the admin token or an owner key".into(),
            ));
        }
    }
    if !s.store.admin().account_exists(account).await? {
        return Err(missing());
    }
    Ok(())
}

/// A key id from the path: 16 hex digits, lower-cased.
fn key_id_of_path(key_id: &str) -> Result<ApiKeyId, ApiError> {
    if key_id.len() != 16 || !key_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::BadRequest(format!(
            "key id {key_id:?} is not 16 hex digits (see GET /v1/accounts/{{id}}/keys)"
        )));
    }
    Ok(key_id.to_ascii_lowercase().into())
}

/// The actor the running request records its commands as (`admin`, `key:<key id>`).
fn by() -> String {
    billing_store::actor::current()
}

async fn issue(
    via: Via,
    principal: Principal,
    s: AppState,
    account: String,
    body: Result<Option<KeyBody>, ApiError>,
) -> Result<Response, ApiError> {
    may_manage(via, &principal, &s, &account).await?;
    let body = body?.unwrap_or_default();
    let role = match body.role.as_deref() {
        None => Role::Owner,
        Some(word) => Role::parse(word).ok_or_else(|| {
            ApiError::Unprocessable(format!(
                "role {:?}: must be owner, finance, viewer or member",
                word.chars().take(32).collect::<String>()
            ))
        })?,
    };
    // Owner is the top role: an owner key (the only key that manages keys) may issue any.
    let key = generate_secret("gbk_");
    let hash = hash_key(&key);
    let by = by();
    let new = NewKey {
        key_hash: &hash,
        role,
        by: Some(&by),
    };
    if !s
        .store
        .admin()
        .add_api_key(&account, &new, (s.clock)())
        .await?
    {
        return Err(ApiError::NotFound(format!("no account {account:?}")));
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "account": account,
            "key_id": billing_store::key_id_of(&hash),
            "role": role,
            "api_key": key,
        })),
    )
        .into_response())
}

async fn list(
    via: Via,
    principal: Principal,
    s: AppState,
    account: String,
) -> Result<Json<Value>, ApiError> {
    may_manage(via, &principal, &s, &account).await?;
    Ok(Json(
        json!({ "account": account, "keys": s.store.admin().api_keys(&account).await? }),
    ))
}

async fn revoke(
    via: Via,
    principal: Principal,
    s: AppState,
    (account, key_id): (String, String),
) -> Result<StatusCode, ApiError> {
    may_manage(via, &principal, &s, &account).await?;
    let key_id = key_id_of_path(&key_id)?;
    if s.store
        .admin()
        .revoke_api_key(&account, &key_id, (s.clock)())
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "account {account:?} has no live key {key_id:?}"
        )))
    }
}

async fn rotate(
    via: Via,
    principal: Principal,
    s: AppState,
    (account, key_id): (String, String),
) -> Result<Response, ApiError> {
    may_manage(via, &principal, &s, &account).await?;
    let key_id = key_id_of_path(&key_id)?;
    let key = generate_secret("gbk_");
    let hash = hash_key(&key);
    let by = by();
    let new = NewKey {
        key_hash: &hash,
        role: Role::Owner, // the store keeps the old key's role
        by: Some(&by),
    };
    let Some(role) = s
        .store
        .admin()
        .rotate_api_key(&account, &key_id, &new, (s.clock)())
        .await?
    else {
        return Err(ApiError::NotFound(format!(
            "account {account:?} has no live key {key_id:?}"
        )));
    };
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "account": account,
            "key_id": billing_store::key_id_of(&hash),
            "role": role,
            "api_key": key,
            "revoked_key_id": key_id,
        })),
    )
        .into_response())
}

/// `POST /v1/admin/accounts/{id}/keys` (`{"role"}`, default owner): another key for the
/// account, shown once. The old keys keep working until revoked.
pub async fn add_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(body): JsonBody<Option<KeyBody>>,
) -> Result<Response, ApiError> {
    issue(Via::Admin, principal, s, account, body).await
}

/// `GET /v1/admin/accounts/{id}/keys`: the account's keys, revoked ones included: id, role,
/// when and by whom made, when revoked.
pub async fn list_keys(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    list(Via::Admin, principal, s, account).await
}

/// `DELETE /v1/admin/accounts/{id}/keys/{key_id}`: the key stops working at once, on every
/// engine (each request looks its key up in the database).
pub async fn revoke_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(path): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    revoke(Via::Admin, principal, s, path).await
}

/// `POST /v1/admin/accounts/{id}/keys/{key_id}/rotate`: a new key of the same role and
/// account, shown once, and the old one revoked, in one transaction.
pub async fn rotate_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(path): Path<(String, String)>,
) -> Result<Response, ApiError> {
    rotate(Via::Admin, principal, s, path).await
}

/// `POST /v1/accounts/{id}/keys`: as the admin's route, for the admin token or an owner key
/// whose scope holds the account.
pub async fn add_account_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(body): JsonBody<Option<KeyBody>>,
) -> Result<Response, ApiError> {
    issue(Via::Customer, principal, s, account, body).await
}

/// `GET /v1/accounts/{id}/keys`.
pub async fn list_account_keys(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    list(Via::Customer, principal, s, account).await
}

/// `DELETE /v1/accounts/{id}/keys/{key_id}`.
pub async fn revoke_account_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(path): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    revoke(Via::Customer, principal, s, path).await
}

/// `POST /v1/accounts/{id}/keys/{key_id}/rotate`.
pub async fn rotate_account_key(
    principal: Principal,
    State(s): State<AppState>,
    Path(path): Path<(String, String)>,
) -> Result<Response, ApiError> {
    rotate(Via::Customer, principal, s, path).await
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
