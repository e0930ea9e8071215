//! Quotas, synchronous authorization with holds, and balances (issue 5, first part).
//!
//! - `PUT /v1/admin/accounts/{id}/quotas` (admin): sets the account's quotas.
//! - `POST /v1/authorize` (admin or ingest token, or an owner or member customer key for an
//!   account within its scope, issue 27): `{account, sku, quantity, seconds,
//!   lease?, region?, ttl_seconds?}` → `{"decision":"allowed","hold":ID,"amount":..,"expires_at":..}` or
//!   `{"decision":"denied","quota":NAME,"used":..,"requested":..,"limit":..}`. A hold lives
//!   `ttl_seconds` (default [`billing_core::quota::DEFAULT_HOLD_TTL_S`], at most
//!   [`MAX_HOLD_TTL_S`]) unless extended; then it expires by itself.
//! - `POST /v1/holds/{id}/extend` (`{ttl_seconds?}`), `POST /v1/holds/{id}/release`: a
//!   customer key's only for a hold of its account or of the one `?account=` names.
//! - `GET /v1/balance`: a customer's own or, with `?account=`, one within its key's scope (the
//!   admin names `?account=`).
//!
//! Section 19: quotas, holds and balances are a billing domain's: `region` (a query parameter,
//! or a field of the authorization) names the region (absent: home), whose cost, wallet and
//! currency they measure; a region the price book does not name is a 422 naming it.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use billing_core::quota::{MAX_HOLD_TTL_S, TtlOutOfRange};
use billing_core::timestamp::format_secs;
use billing_store::{Authorization, Balance, HoldRequest, Quotas};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{Value, json};

pub async fn put_quotas(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    Query(r): Query<crate::query::RegionQuery>,
    JsonBody(quotas): JsonBody<Quotas>,
) -> Result<Json<Quotas>, ApiError> {
    principal.admin()?;
    let quotas = quotas?;
    // A region the price book does not name is a 422 naming it.
    crate::finance::domain_of(&s, &account, r.region.as_deref()).await?;
    s.store
        .quota()
        .set_quotas(&account, r.region.as_deref(), &quotas, (s.clock)())
        .await?;
    Ok(Json(quotas))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthorizeBody {
    account: String,
    sku: String,
    /// A decimal string or a JSON number.
    quantity: Value,
    seconds: i64,
    #[serde(default)]
    lease: Option<String>,
    /// Section 19: the region the lease runs in (absent: home).
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    ttl_seconds: Option<i64>,
}

/// A hold's life from `ttl_seconds`: the default, bounds and check are the core's
/// (`billing_core::quota::hold_ttl_ms`, `DEFAULT_HOLD_TTL_S`, `MAX_HOLD_TTL_S`); this keeps the
/// API's message.
fn ttl_ms(ttl: Option<i64>) -> Result<i64, ApiError> {
    billing_core::quota::hold_ttl_ms(ttl).map_err(|TtlOutOfRange(ttl)| {
        ApiError::Unprocessable(format!(
            "ttl_seconds = {ttl}: must be 1 to {MAX_HOLD_TTL_S}"
        ))
    })
}

pub async fn authorize(
    principal: Principal,
    State(s): State<AppState>,
    JsonBody(b): JsonBody<AuthorizeBody>,
) -> Result<Json<Value>, ApiError> {
    let b = b?;
    if let Principal::Customer(_) = &principal {
        principal
            .scoped(&s, Some(&b.account), crate::auth::Action::Spend)
            .await?;
    }
    // The event grammar (billing_core::decimal): no exponent, no underscores, no silent
    // rounding; a JSON integer is fine, a JSON float is not (it may have lost precision).
    let quantity: Decimal = match &b.quantity {
        Value::String(q) => billing_core::decimal::parse(q)
            .map_err(|e| ApiError::Unprocessable(format!("quantity = {q:?}: {e}")))?,
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            billing_core::decimal::parse(&n.to_string())
                .map_err(|e| ApiError::Unprocessable(format!("quantity = {n}: {e}")))?
        }
        other => {
            return Err(ApiError::Unprocessable(format!(
                "quantity = {other}: must be a decimal string such as \"0.25\" or an integer"
            )));
        }
    };
    let req = HoldRequest {
        account: b.account,
        region: b.region,
        sku: b.sku,
        quantity,
        seconds: b.seconds,
        lease: b.lease,
    };
    let answer = s
        .store
        .quota()
        .authorize(&req, ttl_ms(b.ttl_seconds)?, (s.clock)())
        .await?;
    Ok(Json(match answer {
        Authorization::Allowed(h) => json!({
            "decision": "allowed",
            "hold": h.id,
            "amount": h.amount,
            "expires_at": format_secs(h.expires_at_ms.div_euclid(1000)),
        }),
        Authorization::Denied {
            node,
            quota,
            used,
            requested,
            limit,
        } => json!({
            "decision": "denied",
            "node": node,
            "quota": quota,
            "used": used,
            "requested": requested,
            "limit": limit,
        }),
    }))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtendBody {
    #[serde(default)]
    ttl_seconds: Option<i64>,
}

pub async fn extend_hold(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(a): Query<crate::query::AccountQuery>,
    JsonBody(b): JsonBody<Option<ExtendBody>>,
) -> Result<Json<Value>, ApiError> {
    let owner = hold_owner(&principal, &s, a.account.as_deref()).await?;
    let b = b?.unwrap_or_default();
    let h = s
        .store
        .quota()
        .extend_hold(
            &id.into(),
            owner.as_deref(),
            ttl_ms(b.ttl_seconds)?,
            (s.clock)(),
        )
        .await?;
    Ok(Json(json!({
        "hold": h.id,
        "status": h.status,
        "expires_at": format_secs(h.expires_at_ms.div_euclid(1000)),
    })))
}

pub async fn release_hold(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(a): Query<crate::query::AccountQuery>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let owner = hold_owner(&principal, &s, a.account.as_deref()).await?;
    let h = s
        .store
        .quota()
        .release_hold(&id.into(), owner.as_deref(), (s.clock)())
        .await?;
    Ok((
        StatusCode::OK,
        Json(json!({ "hold": h.id, "status": h.status })),
    ))
}

/// Whose holds the caller may extend or release: any (None) for the admin and ingest tokens; a
/// customer key's, those of its account or of the one `asked` names within its scope (another
/// account's hold is then an unknown hold).
async fn hold_owner(
    principal: &Principal,
    s: &AppState,
    asked: Option<&str>,
) -> Result<Option<String>, ApiError> {
    match principal {
        Principal::Admin | Principal::Ingest => Ok(None),
        Principal::Customer(_) => Ok(Some(
            principal
                .scoped(s, asked, crate::auth::Action::Spend)
                .await?,
        )),
    }
}

#[derive(Deserialize)]
pub struct BalanceQuery {
    account: Option<String>,
    /// Section 19: the region's billing domain (absent: home).
    region: Option<String>,
}

pub async fn balance(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<BalanceQuery>,
) -> Result<Json<Balance>, ApiError> {
    let account = match (&principal, q.account.clone()) {
        (Principal::Customer(_), asked) => {
            principal
                .scoped(&s, asked.as_deref(), crate::auth::Action::Wallet)
                .await?
        }
        (Principal::Admin, Some(a)) => {
            if !s.store.admin().account_exists(&a).await? {
                return Err(ApiError::NotFound(format!("unknown account {a:?}")));
            }
            a
        }
        (Principal::Admin, None) => {
            return Err(ApiError::BadRequest(
                "name the account: GET /v1/balance?account=ID".into(),
            ));
        }
        (Principal::Ingest, _) => {
            return Err(ApiError::Forbidden(
                "the ingest token cannot read balances".into(),
            ));
        }
    };
    crate::finance::domain_of(&s, &account, q.region.as_deref()).await?;
    Ok(Json(
        s.store
            .quota()
            .balance(&account, q.region.as_deref(), (s.clock)())
            .await?,
    ))
}

#[derive(Deserialize)]
pub struct DecisionsQuery {
    account: Option<String>,
    quota: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    after: i64,
    limit: Option<i64>,
}

/// `GET /v1/quota/decisions`: a customer's own decisions; the admin's, all (filter with
/// `account`, `quota`, `kind`); oldest first, `after` a `seq` to page.
pub async fn decisions(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<DecisionsQuery>,
) -> Result<Json<Value>, ApiError> {
    let account = match &principal {
        Principal::Customer(_) => Some(
            principal
                .scoped(&s, q.account.as_deref(), crate::auth::Action::Cost)
                .await?,
        ),
        Principal::Admin => q.account.clone(),
        Principal::Ingest => {
            return Err(ApiError::Forbidden(
                "the ingest token cannot read decisions".into(),
            ));
        }
    };
    if let Some(k) = &q.kind
        && billing_store::DecisionKind::parse(k).is_none()
    {
        return Err(ApiError::BadRequest(format!(
            "kind = {k:?}: use warn, limit, clear, stop or release"
        )));
    }
    let limit = crate::handlers::page_limit(q.limit, 1000)?;
    let list = s
        .store
        .quota()
        .quota_decisions(
            account.as_deref(),
            q.quota.as_deref(),
            q.kind.as_deref(),
            q.after,
            limit,
        )
        .await?;
    let next = crate::handlers::next_after(&list, limit, |d| d.seq);
    Ok(Json(json!({ "decisions": list, "next_after": next })))
}
