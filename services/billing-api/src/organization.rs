//! `GET /v1/organization` (issue 27, the console's organization view): the accounts of a
//! key's scope as a tree, each with its cost to date in a period and its budget, and the
//! cost by project.
//!
//! Everything is read from what other routes answer: the current tree (`AdminHandle::org`),
//! the allocation of every payer of the subtree (`FinanceHandle::allocation`, the rows of
//! `GET /v1/allocation`: so a node's `cost` is the sum of its allocation rows, to the cent)
//! and the accounts' quotas (`spend_limit` is a node's budget, over its subtree).
//!
//! Who sees what: an `owner` or `finance` key, for its account or one below it (`?account=`);
//! outside its scope a 404 as for an unknown account; a `viewer` or `member` key a 403 naming
//! its role (a member's own cost is `GET /v1/allocation`'s). The admin token names the root
//! (`?account=`). A node's `parent` is null at the root of the answer: nothing above the
//! scope is shown.

use crate::auth::{Action, Principal};
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The query of `GET /v1/organization`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrganizationQuery {
    /// `YYYY-MM` (absent: the period holding now).
    pub period: Option<String>,
    /// The root of the tree shown (required with the admin token; a customer key's own
    /// account when absent, else an account within its scope).
    pub account: Option<String>,
}

/// `GET /v1/organization?period=&account=`
pub async fn get_organization(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<OrganizationQuery>,
) -> Result<Json<Value>, ApiError> {
    let root = match &principal {
        Principal::Customer(_) => {
            principal
                .scoped(&s, q.account.as_deref(), Action::Organization)
                .await?
        }
        _ => {
            principal.admin()?;
            let a = q.account.clone().ok_or_else(|| {
                ApiError::BadRequest(
                    "query parameter account= is required with the admin token".into(),
                )
            })?;
            if !s.store.admin().account_exists(&a).await? {
                return Err(crate::auth::unknown_account(&a));
            }
            a
        }
    };
    let now_ms = (s.clock)();
    let label = crate::query::period_or_current(&s, q.period.as_deref(), now_ms).await?;
    let org = s.store.admin().org_in(&label).await?;
    // The registered accounts of the subtree, with their budgets.
    let mut budgets: BTreeMap<String, Option<Decimal>> = BTreeMap::new();
    let mut after: Option<String> = None;
    loop {
        let page = s
            .store
            .admin()
            .accounts(after.as_deref(), billing_store::MAX_ACCOUNTS_PAGE)
            .await?;
        let full = page.len() as i64 == billing_store::MAX_ACCOUNTS_PAGE;
        after = page.last().map(|a| a.id.clone());
        for a in page {
            if org.within(&root, &a.id) {
                budgets.insert(a.id, a.quotas.and_then(|q| q.spend_limit));
            }
        }
        if !full {
            break;
        }
    }
    budgets.entry(root.clone()).or_insert(None);
    // Each payer's allocation once: the cells of the subtree's accounts.
    let payers: BTreeSet<&str> = budgets.keys().map(|a| org.payer_of(a)).collect();
    let mut currency: Option<String> = None;
    let mut cost: BTreeMap<&str, Decimal> = budgets
        .keys()
        .map(|a| (a.as_str(), Decimal::ZERO))
        .collect();
    let mut by_project: BTreeMap<(String, String), Decimal> = BTreeMap::new();
    for payer in payers {
        let Some(a) = s.store.finance().allocation(payer, &label, now_ms).await? else {
            continue;
        };
        currency.get_or_insert(a.currency);
        for r in a.rows {
            if let Some(c) = cost.get_mut(r.account.as_str()) {
                *c += r.total;
                *by_project.entry((r.account, r.tag)).or_default() += r.total;
            }
        }
    }
    let nodes: Vec<Value> = budgets
        .iter()
        .map(|(id, budget)| {
            let subtree_cost: Decimal = cost
                .iter()
                .filter(|(b, _)| org.within(id, b))
                .map(|(_, c)| *c)
                .sum();
            let parent = org
                .parent_of(id)
                .filter(|p| *id != root && org.within(&root, p));
            json!({
                "id": id,
                "parent": parent,
                "payer": org.payer_of(id),
                "cost": cost[id.as_str()],
                "subtree_cost": subtree_cost,
                "budget": budget,
            })
        })
        .collect();
    let rows: Vec<Value> = by_project
        .into_iter()
        .map(|((account, tag), total)| json!({"account": account, "tag": tag, "total": total}))
        .collect();
    Ok(Json(json!({
        "root": root,
        "period": label,
        "currency": currency,
        "total": cost.values().copied().sum::<Decimal>(),
        "nodes": nodes,
        "by_project": rows,
    })))
}
