//! Account terms as commands (issue 10): `PUT` / `DELETE /v1/admin/accounts/{id}/terms/{kind}/{term_id}`
//! and `GET /v1/admin/accounts/{id}/terms`, admin token only. The body of a PUT is the price
//! book entry's fields (`account` and `id` come from the path); "now" for the started and
//! consumed rules is the API's clock ([`crate::state::AppState::clock`]).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use billing_core::pricebook::TermKind;
use billing_store::TermError;
use serde_json::{Value, json};

impl From<TermError> for ApiError {
    fn from(e: TermError) -> Self {
        match e {
            TermError::UnknownAccount(_) | TermError::UnknownTerm(_) => {
                ApiError::NotFound(e.to_string())
            }
            TermError::NoPriceBook | TermError::Conflict(_) => ApiError::Conflict(e.to_string()),
            TermError::Invalid(_) | TermError::PriceBook(_) => ApiError::BadRequest(e.to_string()),
            TermError::Store(s) => s.into(),
        }
    }
}

fn kind_of(kind: &str) -> Result<TermKind, ApiError> {
    TermKind::parse(kind).ok_or_else(|| {
        let kinds: Vec<&str> = TermKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::NotFound(format!(
            "unknown term kind {:?}: use one of {}",
            kind.chars().take(64).collect::<String>(),
            kinds.join(", ")
        ))
    })
}

/// `PUT /v1/admin/accounts/{id}/terms/{kind}/{term_id}`: `changed` is false when the same
/// body was set already (no command recorded).
pub async fn put_term(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, kind, term_id)): Path<(String, String, String)>,
    crate::json_body::JsonBody(body): crate::json_body::JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let kind = kind_of(&kind)?;
    let Value::Object(fields) = body? else {
        return Err(ApiError::BadRequest(
            "the body must be a JSON object of the term's fields".into(),
        ));
    };
    let changed = s
        .store
        .admin()
        .put_term(&account, kind, &term_id, fields.clone(), (s.clock)())
        .await?;
    Ok(Json(json!({
        "account": account,
        "kind": kind.as_str(),
        "term_id": term_id,
        "body": fields,
        "changed": changed,
    })))
}

/// `DELETE /v1/admin/accounts/{id}/terms/{kind}/{term_id}`: ends the term (a started
/// subscription keeps its started cycles); `changed` is false when it had ended already.
pub async fn delete_term(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, kind, term_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let kind = kind_of(&kind)?;
    let changed = s
        .store
        .admin()
        .end_term(&account, kind, &term_id, (s.clock)())
        .await?;
    Ok(Json(json!({
        "account": account,
        "kind": kind.as_str(),
        "term_id": term_id,
        "changed": changed,
    })))
}

/// `GET /v1/admin/accounts/{id}/terms`: the live terms set by commands.
pub async fn list_terms(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let terms = s.store.admin().account_terms(&account).await?;
    Ok(Json(json!({ "account": account, "terms": terms })))
}
