//! `POST /v1/estimate` (issue 26): what a lease would cost under the account's terms, from
//! the core's [`billing_core::estimate::estimate`]. A customer key prices for its own account
//! or one within its scope (`account`; one outside it is a 404, issue 27); the admin token names one with `account`. The
//! price book is the version in force at the lease's `start`, account terms merged in. Reads
//! only: nothing is written. A bad field is a 422 whose message starts with the field's name.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use billing_core::estimate::{Estimate, Lease, check_lease, estimate};
use billing_core::event::Class;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EstimateBody {
    #[serde(default)]
    account: Option<String>,
    sku: Value,
    /// A decimal string or a JSON integer.
    quantity: Value,
    #[serde(default)]
    class: Option<Value>,
    #[serde(default)]
    region: Option<Value>,
    start: Value,
    duration_seconds: Value,
}

fn invalid(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::Unprocessable(format!("{field}: {why}"))
}

fn text<'a>(field: &str, v: &'a Value) -> Result<&'a str, ApiError> {
    v.as_str()
        .ok_or_else(|| invalid(field, format!("must be a string, not {v}")))
}

/// The body as the core's [`Lease`], each mistake naming its field.
fn lease_of(b: &EstimateBody) -> Result<Lease, ApiError> {
    let sku = text("sku", &b.sku)?.to_string();
    let quantity: Decimal = match &b.quantity {
        Value::String(q) => billing_core::decimal::parse(q).map_err(|e| invalid("quantity", e))?,
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            billing_core::decimal::parse(&n.to_string()).map_err(|e| invalid("quantity", e))?
        }
        other => {
            return Err(invalid(
                "quantity",
                format!("{other}: must be a decimal string such as \"0.25\" or an integer"),
            ));
        }
    };
    let class = match &b.class {
        None | Some(Value::Null) => Class::OnDemand,
        Some(v) => {
            let c = text("class", v)?;
            Class::parse(c).ok_or_else(|| {
                invalid("class", format!("{c:?}: must be \"on_demand\" or \"spot\""))
            })?
        }
    };
    let region = match &b.region {
        None | Some(Value::Null) => None,
        Some(v) => Some(text("region", v)?.to_string()).filter(|r| !r.is_empty()),
    };
    let start = text("start", &b.start)?.to_string();
    let duration_seconds = b
        .duration_seconds
        .as_i64()
        .ok_or_else(|| invalid("duration_seconds", "must be a whole number of seconds"))?;
    Ok(Lease {
        sku,
        quantity,
        class,
        region,
        start,
        duration_seconds,
    })
}

fn ingest_refused() -> ApiError {
    ApiError::Forbidden("the ingest token cannot ask for estimates".into())
}

/// `POST /v1/estimate`
pub async fn post_estimate(
    principal: Principal,
    State(s): State<AppState>,
    JsonBody(b): JsonBody<EstimateBody>,
) -> Result<Json<Estimate>, ApiError> {
    if principal == Principal::Ingest {
        return Err(ingest_refused());
    }
    let b = b?;
    let account = match (&principal, b.account.as_deref()) {
        // Issue 27: an account within the key's scope; one outside it is a 404.
        (Principal::Customer(_), asked) => {
            principal
                .scoped(&s, asked, crate::auth::Action::Cost)
                .await?
        }
        (Principal::Admin, None | Some("")) => {
            return Err(invalid("account", "the admin token must name an account"));
        }
        (Principal::Admin, Some(a)) => a.to_string(),
        (Principal::Ingest, _) => return Err(ingest_refused()),
    };
    let lease = lease_of(&b)?;
    let (start, _) = check_lease(&lease).map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    let book = s
        .store
        .admin()
        .pricebook_at(start.secs)
        .await?
        .ok_or_else(|| {
            ApiError::Conflict(format!(
                "no price book applies at {}: upload one with PUT /v1/admin/pricebook",
                lease.start
            ))
        })?;
    estimate(&book, &account, &lease)
        .map(Json)
        .map_err(|e| ApiError::Unprocessable(e.to_string()))
}
