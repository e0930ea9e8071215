//! Issue 28: budgets, alerts and the arrears sequence, and the notifications they write.
//!
//! - `GET /v1/accounts/{id}/notify`: the account's settings, the states of its rules (which
//!   thresholds are crossed, what blocks authorizations) and its arrears sequence with the
//!   step due next and when.
//! - `PUT /v1/accounts/{id}/budgets/{budget}`: `{amount, thresholds, scope?, forecast?,
//!   action?}` sets a budget (`scope`: `{"account": id}` (default: the account itself) or
//!   `{"node": id}`, an account of the key's subtree, or `{"tag": name, "value": v}`, the
//!   cost allocated to a project tag's value in the account's subtree; `action`: `notify` or `stop`);
//!   `DELETE` removes it (a limit it holds is lifted at the next evaluation).
//! - `PUT /v1/accounts/{id}/alerts`: `{balance?: {low_amount?, low_hours?}, reminders?:
//!   {days}}`, the low-balance alert and the expiry reminders (absent: off).
//! - `PUT /v1/admin/accounts/{id}/arrears`: `{grace_seconds, release_after_seconds}` turns the
//!   arrears sequence on for the account (admin); `DELETE` turns it off.
//! - `GET /v1/notifications?account=&after=&limit=`: notifications oldest first (a key's: its
//!   account's, `after` its `seq`; the admin's: every account's unless `account` is given,
//!   `after` the outbox id).
//! - `POST /v1/admin/notify/tick`: evaluates every account's arrears steps, balance alerts and
//!   reminders at the clock (serve runs it every `--notify-tick-seconds`).
//!
//! Customer routes take the admin token too; a key acts within its scope (404 outside it):
//! reading needs `ReadNotify`, changing `ManageNotify` (README, "Keys and roles").

use crate::auth::{Action, Principal};
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use billing_core::notify::{
    ArrearsPolicy, BalanceAlert, Budget, BudgetAction, BudgetScope, ReminderPolicy,
};
use billing_store::{NotifyError, NotifySettings};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{Value, json};

impl From<NotifyError> for ApiError {
    fn from(e: NotifyError) -> Self {
        match e {
            NotifyError::UnknownAccount(a) => crate::auth::unknown_account(&a),
            NotifyError::Invalid(m) => ApiError::Unprocessable(m),
            e @ NotifyError::NoBudget { .. } => ApiError::NotFound(e.to_string()),
            NotifyError::Store(s) => s.into(),
        }
    }
}

/// The account a route acts on: the admin's any (404 when unknown), a key's within its scope
/// and role.
pub(crate) async fn account_for(
    principal: &Principal,
    s: &AppState,
    account: &str,
    action: Action,
) -> Result<String, ApiError> {
    match principal {
        Principal::Admin => {
            if s.store.admin().account_exists(account).await? {
                Ok(account.to_string())
            } else {
                Err(crate::auth::unknown_account(account))
            }
        }
        Principal::Customer(_) => principal.scoped(s, Some(account), action).await,
        Principal::Ingest => Err(ApiError::Forbidden(
            "this route takes the admin token or a customer API key".into(),
        )),
    }
}

/// `GET /v1/accounts/{id}/notify`.
pub async fn get_notify(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<billing_store::NotifyView>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ReadNotify).await?;
    Ok(Json(s.store.notify().view(&account).await?))
}

/// `{"account": id}`, `{"node": id}` or `{"tag": name, "value": v}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScopeBody {
    #[serde(default)]
    account: Option<String>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    value: Option<String>,
}

impl ScopeBody {
    fn scope(self) -> Result<BudgetScope, ApiError> {
        match (self.account, self.node, self.tag, self.value) {
            (Some(a), None, None, None) => Ok(BudgetScope::Account(a)),
            (None, Some(n), None, None) => Ok(BudgetScope::Node(n)),
            (None, None, Some(tag), Some(value)) => Ok(BudgetScope::Tag { tag, value }),
            _ => Err(ApiError::Unprocessable(
                "scope: one of {\"account\": id}, {\"node\": id} or {\"tag\": name, \"value\": v}"
                    .into(),
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetBody {
    amount: Decimal,
    thresholds: Vec<Decimal>,
    #[serde(default)]
    scope: Option<ScopeBody>,
    #[serde(default)]
    forecast: bool,
    #[serde(default)]
    action: Option<BudgetAction>,
}

/// `PUT /v1/accounts/{id}/budgets/{budget}`.
pub async fn put_budget(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
    JsonBody(b): JsonBody<BudgetBody>,
) -> Result<Json<Budget>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let b = b?;
    let scope = match b.scope {
        None => BudgetScope::Account(account.clone()),
        Some(body) => body.scope()?,
    };
    // The budget's subject is the account or an account below it.
    let target = match &scope {
        BudgetScope::Account(a) | BudgetScope::Node(a) => a.clone(),
        BudgetScope::Tag { .. } => account.clone(),
    };
    if !s
        .store
        .admin()
        .org((s.clock)())
        .await?
        .within(&account, &target)
    {
        return Err(ApiError::Unprocessable(format!(
            "scope: {target:?} is not {account:?} nor an account below it"
        )));
    }
    let budget = Budget {
        id: id.clone(),
        account: account.clone(),
        scope,
        amount: b.amount,
        thresholds: b.thresholds,
        forecast: b.forecast,
        action: b.action.unwrap_or(BudgetAction::Notify),
    };
    let set = budget.clone();
    s.store
        .notify()
        .change_settings(
            &account,
            move |st| {
                st.budgets.insert(id, set);
                Ok(())
            },
            (s.clock)(),
        )
        .await?;
    Ok(Json(budget))
}

/// `DELETE /v1/accounts/{id}/budgets/{budget}`.
pub async fn delete_budget(
    principal: Principal,
    State(s): State<AppState>,
    Path((account, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let owner = account.clone();
    s.store
        .notify()
        .change_settings(
            &account,
            move |st| match st.budgets.remove(&id) {
                Some(_) => Ok(()),
                None => Err(NotifyError::NoBudget {
                    account: owner,
                    budget: id,
                }),
            },
            (s.clock)(),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AlertsBody {
    #[serde(default)]
    balance: Option<BalanceAlert>,
    #[serde(default)]
    reminders: Option<ReminderPolicy>,
}

/// `PUT /v1/accounts/{id}/alerts`.
pub async fn put_alerts(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(b): JsonBody<AlertsBody>,
) -> Result<Json<NotifySettings>, ApiError> {
    let account = account_for(&principal, &s, &account, Action::ManageNotify).await?;
    let b = b?;
    let settings = s
        .store
        .notify()
        .change_settings(
            &account,
            move |st| {
                st.balance = b.balance;
                st.reminders = b.reminders;
                Ok(())
            },
            (s.clock)(),
        )
        .await?;
    Ok(Json(settings))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArrearsBody {
    grace_seconds: i64,
    release_after_seconds: i64,
}

/// `PUT /v1/admin/accounts/{id}/arrears` (admin).
pub async fn put_arrears(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(b): JsonBody<ArrearsBody>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let b = b?;
    let policy = ArrearsPolicy {
        grace_secs: b.grace_seconds,
        release_after_secs: b.release_after_seconds,
    };
    set_arrears(&s, &account, Some(policy)).await?;
    Ok(Json(json!({
        "account": account,
        "grace_seconds": policy.grace_secs,
        "release_after_seconds": policy.release_after_secs,
    })))
}

/// `DELETE /v1/admin/accounts/{id}/arrears` (admin).
pub async fn delete_arrears(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<StatusCode, ApiError> {
    principal.admin()?;
    set_arrears(&s, &account, None).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_arrears(
    s: &AppState,
    account: &str,
    policy: Option<ArrearsPolicy>,
) -> Result<(), ApiError> {
    s.store
        .notify()
        .change_settings(
            account,
            move |st| {
                st.arrears = policy;
                Ok(())
            },
            (s.clock)(),
        )
        .await?;
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotificationsQuery {
    #[serde(default)]
    account: Option<String>,
    #[serde(default)]
    after: Option<i64>,
    #[serde(default)]
    limit: Option<i64>,
}

/// Most notifications one page holds.
pub const MAX_NOTIFICATIONS_PAGE: i64 = 1000;

/// `GET /v1/notifications`.
pub async fn list_notifications(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<NotificationsQuery>,
) -> Result<Json<Value>, ApiError> {
    let account = match &principal {
        Principal::Admin => q.account.clone(),
        _ => Some(
            principal
                .scoped(&s, q.account.as_deref(), Action::ReadNotify)
                .await?,
        ),
    };
    let limit = q.limit.unwrap_or(100);
    if !(1..=MAX_NOTIFICATIONS_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit = {limit}: must be 1 to {MAX_NOTIFICATIONS_PAGE}"
        )));
    }
    let after = q.after.unwrap_or(0);
    let rows = s
        .store
        .notify()
        .notifications(account.as_deref(), after, limit)
        .await?;
    Ok(Json(json!({ "notifications": rows })))
}

/// `POST /v1/admin/notify/tick` (admin).
pub async fn tick(
    principal: Principal,
    State(s): State<AppState>,
) -> Result<Json<billing_store::Ticked>, ApiError> {
    principal.admin()?;
    Ok(Json(s.store.notify().tick((s.clock)()).await?))
}
