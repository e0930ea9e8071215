//! Who the caller is and what things cost (issue 24.11 and 24.15):
//!
//! - `GET /v1/me`: the role of the bearer token (`admin`, `ingest` or `customer`), the account
//!   of a customer key, and the token's name (a customer key's is its key id, the first 16 hex
//!   digits of its SHA-256, as the key list and the audit log name it). Every token may ask,
//!   so the console learns who signed in without calling a route the token may not use.
//! - `GET /v1/admin/pricebook[?version=N]`: a version as uploaded, byte for byte
//!   (`application/toml`), the newest without `version`; its metadata in headers:
//!   `X-Pricebook-Version`, `X-Uploaded-At` and `X-Effective-From` (RFC 3339; the latter only
//!   when the version has one), `X-Content-SHA256` (hex of the body) and the same as a strong
//!   `ETag`.
//! - `GET /v1/prices`: the prices a customer rents at now ([`billing_core::prices`]), as
//!   JSON: the home region's at the top level, every other region's in `regions` (each in its
//!   own currency, issue 26); the admin may name an account with `?account=` (its discount),
//!   or none.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use billing_core::timestamp::format_secs;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// `GET /v1/me`
pub async fn me(principal: Principal) -> Json<Value> {
    Json(match &principal {
        Principal::Admin => {
            json!({"role": "admin", "account": null, "name": "admin", "key_id": null})
        }
        Principal::Ingest => {
            json!({"role": "ingest", "account": null, "name": "ingest", "key_id": null})
        }
        Principal::Customer(key) => {
            // `key_role` and `scope` (issue 27): what the key may do, and where (its account
            // and the accounts below it; a member key its account only).
            json!({"role": "customer", "account": key.account, "name": key.key_id,
                "key_id": key.key_id, "key_role": key.role, "scope": key.account})
        }
    })
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VersionQuery {
    /// A version number (`PUT /v1/admin/pricebook` answered it); the newest when absent.
    pub version: Option<String>,
}

pub const VERSION_HEADER: &str = "x-pricebook-version";
pub const UPLOADED_AT_HEADER: &str = "x-uploaded-at";
pub const EFFECTIVE_FROM_HEADER: &str = "x-effective-from";
pub const SHA256_HEADER: &str = "x-content-sha256";

/// `GET /v1/admin/pricebook[?version=N]`
pub async fn get_pricebook(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<VersionQuery>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let version = match q.version.as_deref() {
        None => None,
        Some(v) => Some(
            v.parse::<i64>()
                .ok()
                .filter(|n| *n >= 1 && v.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "version {:?} is not a positive whole number",
                        v.chars().take(32).collect::<String>()
                    ))
                })?,
        ),
    };
    let book = s
        .store
        .admin()
        .uploaded_pricebook(version)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(match version {
                Some(v) => format!("no price book version {v}"),
                None => "no price book has been uploaded yet".into(),
            })
        })?;
    let sha = hex::encode(Sha256::digest(book.toml.as_bytes()));
    let mut response = (
        [(header::CONTENT_TYPE, "application/toml; charset=utf-8")],
        book.toml,
    )
        .into_response();
    let h = response.headers_mut();
    let mut set = |name: &'static str, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(HeaderName::from_static(name), v);
        }
    };
    set(VERSION_HEADER, book.version.to_string());
    set(
        UPLOADED_AT_HEADER,
        format_secs(book.uploaded_at_ms.div_euclid(1000)),
    );
    if let Some(from) = book.effective_from_s {
        set(EFFECTIVE_FROM_HEADER, format_secs(from));
    }
    set(SHA256_HEADER, sha.clone());
    set("etag", format!("\"{sha}\""));
    Ok(response)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PricesQuery {
    /// The account whose discount to show: the admin names any; a customer key reads its own
    /// or one within its scope.
    pub account: Option<String>,
}

/// `GET /v1/prices`
pub async fn prices(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PricesQuery>,
) -> Result<Json<Value>, ApiError> {
    let account = match &principal {
        Principal::Customer(_) => {
            principal
                .scoped(&s, q.account.as_deref(), crate::auth::Action::Prices)
                .await?
        }
        Principal::Admin => q.account.unwrap_or_default(),
        Principal::Ingest => {
            return Err(ApiError::Forbidden(
                "the ingest token cannot read prices".into(),
            ));
        }
    };
    let now_ms = (s.clock)();
    let (label, list) = s
        .store
        .admin()
        .price_list(&account, now_ms)
        .await?
        .ok_or_else(|| ApiError::Conflict("no price book applies now".into()))?;
    let mut v = serde_json::to_value(&list).map_err(|e| ApiError::Internal(e.to_string()))?;
    v["as_of"] = json!(format_secs(now_ms.div_euclid(1000)));
    v["period_label"] = json!(label);
    Ok(Json(v))
}
