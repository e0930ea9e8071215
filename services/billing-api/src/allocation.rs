//! `GET /v1/allocation` (issue 27, billing-semantics section 18): a payer's cost in a period
//! split to (member, tag value) cells, grouped by account or by tag, for a closed period (its
//! issued invoice) or the open one (its provisional invoice so far).
//!
//! Who sees what: the admin token names the account (`?account=`); a customer key reads the
//! allocation that holds its own account's cost. A payer's key sees every row of its
//! invoice; a member's key (an account paid for by another) sees its own rows only, never a
//! sibling's.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use billing_core::pricing::allocation_report::{GroupBy, group};
use serde::Deserialize;
use serde_json::{Value, json};

/// The query of `GET /v1/allocation`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AllocationQuery {
    /// `YYYY-MM` (absent: the period holding now).
    pub period: Option<String>,
    /// `cell` (default: one row per account and tag value), `account` or `tag`.
    pub group_by: Option<String>,
    /// The account whose cost is meant (required with the admin token; a customer key's own
    /// account when absent).
    pub account: Option<String>,
}

/// `GET /v1/allocation?period=&group_by=&account=`
pub async fn get_allocation(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<AllocationQuery>,
) -> Result<Json<Value>, ApiError> {
    let by = match q.group_by.as_deref() {
        None => GroupBy::Cell,
        Some(g) => GroupBy::parse(g).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "group_by {:?} must be cell, account or tag",
                g.chars().take(64).collect::<String>()
            ))
        })?,
    };
    let (account, admin) = match &principal {
        Principal::Customer(own) => match q.account.as_deref() {
            None => (own.clone(), false),
            Some(a) if a == own => (own.clone(), false),
            // Another account is another tenant's: as unknown as one that does not exist.
            Some(a) => return Err(ApiError::NotFound(format!("no account {a:?}"))),
        },
        _ => {
            principal.admin()?;
            let a = q.account.clone().ok_or_else(|| {
                ApiError::BadRequest(
                    "query parameter account= is required with the admin token".into(),
                )
            })?;
            (a, true)
        }
    };
    let now_ms = (s.clock)();
    let label = match &q.period {
        Some(_) => crate::query::PeriodQuery {
            period: q.period.clone(),
            format: None,
        }
        .required_period()?,
        None => s
            .store
            .finance()
            .period_label_at(now_ms)
            .await?
            .ok_or_else(|| ApiError::Conflict("no price book has been uploaded yet".into()))?,
    };
    let a = s
        .store
        .finance()
        .allocation(&account, &label, now_ms)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no invoice holds the cost of {account:?} for {label}"
            ))
        })?;
    // A member's key sees its own cells only.
    let rows: Vec<_> = a
        .rows
        .into_iter()
        .filter(|r| admin || a.payer == account || r.account == account)
        .collect();
    let total: rust_decimal::Decimal = rows.iter().map(|r| r.total).sum();
    Ok(Json(json!({
        "payer": a.payer,
        "period": a.period,
        "status": a.status,
        "currency": a.currency,
        "group_by": by,
        "invoice_total": (admin || a.payer == account).then_some(a.total),
        "total": total,
        "rows": group(&rows, by),
    })))
}
