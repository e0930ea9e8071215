//! `GET /v1/usage`: the caller's unit-seconds per bucket, straight from the ledger. The
//! handler parses the query, calls the core (`billing_core::ledger::usage`: the checks, the
//! bucketing and the paging) and renders the page.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use billing_core::ledger::usage;
use billing_core::timestamp::{Timestamp, format_secs};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// Start, RFC 3339 (inclusive; floored to the granularity).
    #[param(required = true)]
    pub from: Option<String>,
    /// End, RFC 3339 (exclusive).
    #[param(required = true)]
    pub to: Option<String>,
    /// `second`, `minute`, `hour` (default), `day` or `month`... `month` is not offered:
    /// calendar months depend on the price book's timezone; use the invoices.
    pub granularity: Option<String>,
    /// `sku` (default), `lease` or `resource`.
    pub group_by: Option<String>,
    /// Groups per page, 1 to 1000 (default 100); groups are ordered by key.
    pub group_limit: Option<usize>,
    /// Only groups whose key sorts after this one (the previous page's `next_group_after`).
    pub group_after: Option<String>,
    /// RFC 3339, not in the future: the answer as it was at that instant, from only the
    /// events ingested by then (issue 12).
    pub as_known_at: Option<String>,
    /// Only skus of this family (the sku's name up to its first `.`: `gpu`, `storage`,
    /// `vgpu`): the unit-seconds of one unit, as a chart of one unit needs them when grouped
    /// by lease or resource (a lease's GPU-seconds and GB-seconds never add up).
    pub family: Option<String>,
    /// Section 19: the usage of this region (absent: home).
    pub region: Option<String>,
    /// An account within the key's scope (absent: the key's own; issue 27).
    pub account: Option<String>,
}

fn instant(v: Option<&String>, name: &str) -> Result<i64, ApiError> {
    let text = v.ok_or_else(|| {
        ApiError::BadRequest(format!("query parameter {name} (RFC 3339) is required"))
    })?;
    Timestamp::parse_rfc3339(text)
        .map(|t| t.secs)
        .ok_or_else(|| ApiError::BadRequest(format!("{name} {text:?} is not an RFC 3339 time")))
}

#[derive(Serialize)]
struct Bucket<'a> {
    start: &'a str,
    unit_seconds: Decimal,
}

#[derive(Serialize)]
struct Group<'a> {
    key: String,
    buckets: Vec<Bucket<'a>>,
}

pub async fn usage(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<UsageQuery>,
) -> Result<Response, ApiError> {
    let home = principal
        .scoped(&s, q.account.as_deref(), crate::auth::Action::Usage)
        .await?;
    // Section 19: a region's usage is its billing domain's ledger.
    let account = crate::finance::domain_of(&s, &home, q.region.as_deref()).await?;
    let bad = |e: usage::UsageQueryError| ApiError::BadRequest(e.to_string());
    let step = usage::granularity_step(q.granularity.as_deref()).map_err(bad)?;
    let group_by = q.group_by.as_deref().unwrap_or("sku");
    let grouping = usage::GroupBy::parse(Some(group_by)).map_err(bad)?;
    let (from, to) = usage::bucket_range(
        instant(q.from.as_ref(), "from")?,
        instant(q.to.as_ref(), "to")?,
        step,
    )
    .map_err(bad)?;
    let group_limit = usage::group_limit(q.group_limit).map_err(bad)?;
    let family = q.family.as_deref();
    usage::check_family(family).map_err(bad)?;
    let known_at = crate::finance::known_at(q.as_known_at.as_ref(), (s.clock)())?;
    let ledger = match known_at {
        // Support's question, not the hot path: rebuilt each time, never kept.
        Some(t_ms) => Some(
            s.store
                .log()
                .ledger_known_at(&account, billing_store::Known::ByTime(t_ms))
                .await?,
        ),
        None => None,
    };
    // An answer depends on the account's ledger alone: one kept under the ledger token read
    // now is served as it is (read before the ledger, so a kept answer is never older than
    // the token it is kept under).
    let asked = format!(
        "{account}\n{from}|{to}|{step}|{group_by}|{group_limit}|{:?}|{:?}|{known_at:?}|{family:?}",
        q.group_after, q.granularity
    );
    let token = match ledger {
        Some(_) => None,
        None => s.store.log().ledger_token(&account).await?,
    };
    if let Some(body) = token.and_then(|t| s.usage_answers.get(&asked, t)) {
        return Ok(json_response(body));
    }
    // One computation per (account, query) at a time: the requests that missed together
    // (a fold just moved the account) wait for the first and take its answer.
    let flight = s.usage_answers.flight(&asked);
    let _computing = flight.lock().await;
    let token = match ledger {
        Some(_) => None,
        None => s.store.log().ledger_token(&account).await?,
    };
    if let Some(body) = token.and_then(|t| s.usage_answers.get(&asked, t)) {
        return Ok(json_response(body));
    }
    let ledger = match ledger {
        Some(l) => l,
        None => {
            s.store
                .log()
                .usage_ledger_at(&account, token, from, to)
                .await?
        }
    };
    let page = usage::usage_buckets(
        &ledger,
        &usage::UsageRequest {
            from,
            to,
            step,
            group_by: grouping,
            group_limit,
            group_after: q.group_after.as_deref(),
            family,
        },
    );
    // Bucket start times are the same for every group: format them once.
    let starts: Vec<String> = page.starts.iter().map(|s| format_secs(*s)).collect();
    let groups: Vec<Group<'_>> = page
        .groups
        .into_iter()
        .map(|(key, series)| Group {
            key: key.to_string(),
            buckets: series
                .into_iter()
                .zip(&starts)
                .map(|(v, start)| Bucket {
                    start,
                    unit_seconds: v.normalize(),
                })
                .collect(),
        })
        .collect();
    let body: axum::body::Bytes = serde_json::to_vec(&json!({
        "account": home,
        "region": q.region,
        "from": format_secs(from),
        "to": format_secs(page.end),
        "granularity": q.granularity.as_deref().unwrap_or("hour"),
        "group_by": group_by,
        "unit": "unit_seconds",
        "groups": groups,
        "next_from": page.next_from.map(format_secs),
        "group_limit": group_limit,
        "next_group_after": page.next_group_after,
    }))
    .map_err(|e| ApiError::Internal(format!("usage answer: {e}")))?
    .into();
    if let Some(t) = token {
        s.usage_answers.put(asked, t, body.clone());
    }
    Ok(json_response(body))
}

fn json_response(body: axum::body::Bytes) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}
