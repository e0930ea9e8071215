//! `GET /v1/allocation` (issue 27, billing-semantics section 18): a payer's cost in a period
//! split to (member, tag value) cells, grouped by account or by tag, for a closed period (its
//! issued invoice) or the open one (its provisional invoice so far).
//!
//! Who sees what: the admin token names the account (`?account=`); a customer key reads the
//! allocation that holds the cost of its own account or of the one `?account=` names within
//! its scope (issue 27: outside it, a 404 as for an unknown account; a role without the
//! allocation permission, a 403). It sees the rows of the accounts its scope holds: a payer's
//! key every row of its invoice, a paid-for account's key its own rows (and those of the
//! accounts below it), never a sibling's; the invoice's total only when its scope holds the
//! payer.

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
    // The admin sees every row (None); a customer key the rows its scope holds.
    let (account, view) = match &principal {
        Principal::Customer(key) => {
            let account = principal
                .scoped(&s, q.account.as_deref(), crate::auth::Action::Allocation)
                .await?;
            (account, Some(key.view(&s).await?))
        }
        _ => {
            principal.admin()?;
            let a = q.account.clone().ok_or_else(|| {
                ApiError::BadRequest(
                    "query parameter account= is required with the admin token".into(),
                )
            })?;
            (a, None)
        }
    };
    let sees = |a: &str| view.as_ref().is_none_or(|v| v.holds(a));
    let now_ms = (s.clock)();
    let label = crate::query::period_or_current(&s, q.period.as_deref(), now_ms).await?;
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
    // A key sees the cells of the accounts its scope holds.
    let rows: Vec<_> = a.rows.into_iter().filter(|r| sees(&r.account)).collect();
    let total: rust_decimal::Decimal = rows.iter().map(|r| r.total).sum();
    Ok(Json(json!({
        "payer": a.payer,
        "period": a.period,
        "status": a.status,
        "currency": a.currency,
        "group_by": by,
        "invoice_total": sees(&a.payer).then_some(a.total),
        "total": total,
        "rows": group(&rows, by),
    })))
}
