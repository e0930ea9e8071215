//! `GET /v1/usage`: the caller's unit-seconds per bucket, straight from the ledger.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use billing_core::timestamp::{Timestamp, format_secs};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;

/// Most buckets of one group in one response; longer ranges are paginated with `next_from`.
pub const MAX_BUCKETS: i64 = 1_000;

/// Most groups one response carries (`group_limit`, default [`DEFAULT_GROUPS`]); more are
/// paginated with `next_group_after`.
pub const MAX_GROUPS: usize = 1_000;

/// Groups per page when `group_limit` is not given.
pub const DEFAULT_GROUPS: usize = 100;

/// Most cells (groups x buckets) one response carries: a page of many groups carries fewer
/// buckets each. Bounds the work and memory of every usage query (~10,700 resources at second
/// granularity once built one answer of gigabytes and took the process down).
pub const MAX_CELLS: i64 = 100_000;

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
    let account = principal.customer()?.to_string();
    let step: i64 = match q.granularity.as_deref().unwrap_or("hour") {
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        other => {
            return Err(ApiError::BadRequest(format!(
                "granularity {other:?} is not one of second, minute, hour, day"
            )));
        }
    };
    let group_by = q.group_by.as_deref().unwrap_or("sku");
    if !["sku", "lease", "resource"].contains(&group_by) {
        return Err(ApiError::BadRequest(format!(
            "group_by {group_by:?} is not one of sku, lease, resource"
        )));
    }
    let from = instant(q.from.as_ref(), "from")?.div_euclid(step) * step;
    let to = instant(q.to.as_ref(), "to")?;
    if to <= from {
        return Err(ApiError::BadRequest("to must be after from".into()));
    }
    let group_limit = q.group_limit.unwrap_or(DEFAULT_GROUPS);
    if !(1..=MAX_GROUPS).contains(&group_limit) {
        return Err(ApiError::BadRequest(format!(
            "group_limit {group_limit} is not between 1 and {MAX_GROUPS}"
        )));
    }
    let family = q.family.as_deref();
    if family.is_some_and(|f| f.is_empty() || f.contains('.') || f.len() > 256) {
        return Err(ApiError::BadRequest(
            "family must be an sku's name up to its first \".\" (gpu, storage, ...)".into(),
        ));
    }
    let in_family = |key: &billing_core::ledger::ResourceKey| {
        family.is_none_or(|f| billing_core::prices::sku_family(&key.sku) == f)
    };
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
    fn name_of<'k>(key: &'k billing_core::ledger::ResourceKey, group_by: &str) -> &'k str {
        match group_by {
            "lease" => &key.lease,
            "resource" => &key.resource,
            _ => &key.sku,
        }
    }
    // This page's groups: the first `group_limit` keys after `group_after` with usage in range.
    let mut names: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (key, runs) in ledger.usage().filter(|(k, _)| in_family(k)) {
        let name = name_of(key, group_by);
        let after = q.group_after.as_deref().is_none_or(|a| name > a);
        if after && runs.clipped(from, to).next().is_some() {
            names.insert(name);
            if names.len() > group_limit {
                names.pop_last();
            }
        }
    }
    // Whether groups remain after this page.
    let last = names.last().copied();
    let more_groups = last.is_some_and(|l| {
        ledger.usage().any(|(key, runs)| {
            in_family(key) && name_of(key, group_by) > l && runs.clipped(from, to).next().is_some()
        })
    });
    // One page: at most MAX_CELLS cells, MAX_BUCKETS buckets per group.
    let per_group = (MAX_CELLS / names.len().max(1) as i64).min(MAX_BUCKETS);
    let page_end = to.min(from.saturating_add(step.saturating_mul(per_group)));
    let buckets = ((page_end - from) + step - 1) / step;
    // Per group, seconds per bucket summed as integers for each distinct quantity (a group's
    // keys have few), multiplied out once per bucket at the end: exact, as every step is, and
    // a few integer additions per bucket instead of a decimal multiplication and addition.
    let mut by_quantity: BTreeMap<&str, Vec<(Decimal, Vec<i64>)>> = BTreeMap::new();
    for (key, runs) in ledger.usage().filter(|(k, _)| in_family(k)) {
        let name = name_of(key, group_by);
        if !names.contains(name) {
            continue;
        }
        for run in runs.clipped(from, page_end) {
            let per_quantity = by_quantity.entry(name).or_default();
            let at = match per_quantity.iter().position(|(q, _)| *q == run.quantity) {
                Some(at) => at,
                None => {
                    per_quantity.push((run.quantity, vec![0; buckets as usize]));
                    per_quantity.len() - 1
                }
            };
            let seconds = &mut per_quantity[at].1;
            let mut t = run.from;
            while t < run.to {
                let b = (t - from) / step;
                let end = (from + (b + 1) * step).min(run.to);
                seconds[b as usize] += end - t;
                t = end;
            }
        }
    }
    let groups: BTreeMap<&str, Vec<Decimal>> = by_quantity
        .into_iter()
        .map(|(name, per_quantity)| {
            let mut series = vec![Decimal::ZERO; buckets as usize];
            for (q, seconds) in per_quantity {
                for (total, s) in series.iter_mut().zip(seconds) {
                    if s != 0 {
                        *total += q * Decimal::from(s);
                    }
                }
            }
            (name, series)
        })
        .collect();
    // Bucket start times are the same for every group: format them once.
    let starts: Vec<String> = (0..buckets).map(|i| format_secs(from + i * step)).collect();
    let groups: Vec<Group<'_>> = groups
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
        "account": account,
        "from": format_secs(from),
        "to": format_secs(page_end),
        "granularity": q.granularity.as_deref().unwrap_or("hour"),
        "group_by": group_by,
        "unit": "unit_seconds",
        "groups": groups,
        "next_from": (page_end < to).then(|| format_secs(page_end)),
        "group_limit": group_limit,
        "next_group_after": if more_groups { last } else { None },
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
