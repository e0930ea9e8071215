//! Organizations over the API (issue 27, billing-semantics section 18): an account's place in
//! its tree, `parent` and `pays`, set when it is created (`POST /v1/admin/accounts`) or moved
//! later (`PATCH /v1/admin/accounts/{id}`). Either is the account's `accounts` term set by
//! command (`PUT /v1/admin/accounts/{id}/terms/accounts/{id}` says the same): recorded on the
//! commands topic with its actor, replayed by `gpubill replay`, validated against the price
//! book (no cycle, at most 8 accounts root to leaf, discounts and credits still on payers:
//! a 409 naming the cycle or the path otherwise). A move reaches every period not yet
//! closed and never a closed one: a closed period is re-rated with the terms it was closed
//! with (`choices.rs`, "Organizations in the engine").

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use billing_core::pricebook::TermKind;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Who pays for an account (section 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pays {
    /// The account pays for itself (the default).
    #[serde(rename = "self")]
    Itself,
    /// Its parent's payer pays for it.
    Parent,
}

/// `PATCH /v1/admin/accounts/{id}`: where the account moves.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountMove {
    /// The new parent (null: a root).
    pub parent: Option<String>,
    /// Who pays for the account from now on (default `self`).
    pub pays: Option<Pays>,
}

/// The `accounts` term's fields for `parent` and `pays`, keeping the other settings stored
/// (the timezone).
pub(crate) fn placement(
    mut kept: Map<String, Value>,
    parent: Option<&str>,
    pays: Option<Pays>,
) -> Map<String, Value> {
    kept.remove("parent");
    kept.remove("pays");
    if let Some(p) = parent {
        kept.insert("parent".into(), Value::String(p.to_string()));
    }
    if pays == Some(Pays::Parent) {
        kept.insert("pays".into(), Value::String("parent".into()));
    }
    kept
}

/// Sets `account`'s place: its `accounts` term, stored settings kept. The parent must be a
/// registered account (404 naming it).
pub(crate) async fn place(
    s: &AppState,
    account: &str,
    parent: Option<&str>,
    pays: Option<Pays>,
) -> Result<bool, ApiError> {
    if let Some(p) = parent
        && !s.store.admin().account_exists(p).await?
    {
        return Err(ApiError::NotFound(format!("no parent account {p:?}")));
    }
    if pays == Some(Pays::Parent) && parent.is_none() {
        return Err(ApiError::BadRequest(
            "pays = \"parent\" needs a parent".into(),
        ));
    }
    let kept = s
        .store
        .admin()
        .account_terms(account)
        .await?
        .into_iter()
        .find(|t| t.kind == TermKind::Accounts && t.term_id == account)
        .map(|t| t.body)
        .unwrap_or_default();
    let fields = placement(kept, parent, pays);
    s.store
        .admin()
        .put_term(account, TermKind::Accounts, account, fields, (s.clock)())
        .await
        .map_err(|e| match e {
            // The tree refused (a cycle, more than 8 levels, a discount or credit left on an
            // account that would no longer pay for itself): a conflict with the accounts as
            // they are, naming it.
            billing_store::TermError::PriceBook(_) => ApiError::Conflict(e.to_string()),
            other => other.into(),
        })
}

/// `PATCH /v1/admin/accounts/{id}`: moves the account (or changes who pays for it) for every
/// period not yet closed.
pub async fn patch_account(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    crate::json_body::JsonBody(req): crate::json_body::JsonBody<AccountMove>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let req = req?;
    if !s.store.admin().account_exists(&account).await? {
        return Err(ApiError::NotFound(format!("no account {account:?}")));
    }
    let changed = place(&s, &account, req.parent.as_deref(), req.pays).await?;
    let pays = req.pays.unwrap_or(Pays::Itself);
    Ok(Json(json!({
        "id": account,
        "parent": req.parent,
        "pays": if pays == Pays::Parent { "parent" } else { "self" },
        "changed": changed,
    })))
}
