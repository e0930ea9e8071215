//! The middleware of [`crate::shards`]: which shard a request is for, and forwarding it there.

use crate::error::ApiError;
use crate::shards::{FORWARDED_BY, ShardRoutes};
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The middleware (see the module header).
pub(crate) async fn route(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let Some(routes) = s.shards.clone() else {
        return next.run(req).await;
    };
    if req.headers().contains_key(FORWARDED_BY) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, crate::limits::MAX_BODY_BYTES).await else {
        return ApiError::TooLarge(format!(
            "the request body is over {} bytes",
            crate::limits::MAX_BODY_BYTES
        ))
        .into_response();
    };
    let targets = match targets(&s, &routes, &parts, &bytes).await {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    if targets.is_empty() {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    forward(&routes, &targets, &parts, bytes).await
}

/// The API URLs to try, in order; empty: answer here.
async fn targets(
    s: &AppState,
    routes: &ShardRoutes,
    parts: &Parts,
    body: &Bytes,
) -> Result<Vec<String>, ApiError> {
    let shards = routes.directory.shards().await?;
    let url_of = |i: u32| {
        shards
            .iter()
            .find(|e| e.shard == i)
            .map(|e| e.api_url.clone())
            .ok_or_else(|| {
                ApiError::Unavailable(format!("shard {i} is not in the shard directory"))
            })
    };
    if let Some(account) = account_of(parts, body) {
        let root = s.store.tree_root(&account).await?;
        let holder = routes.directory.holder(&root, routes.shard.count).await?;
        if holder == routes.shard.index {
            return Ok(Vec::new());
        }
        return Ok(vec![url_of(holder)?]);
    }
    let key = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .filter(|k| k.starts_with("gbk_"));
    if let Some(key) = key
        && s.store
            .admin()
            .key_grant(&billing_store::hash_key(key))
            .await?
            .is_none()
    {
        return shards
            .iter()
            .filter(|e| e.shard != routes.shard.index)
            .map(|e| Ok(e.api_url.clone()))
            .collect();
    }
    Ok(Vec::new())
}

/// The account a request names (see the module header).
fn account_of(parts: &Parts, body: &Bytes) -> Option<String> {
    let segments: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["v1", "accounts", id, _, ..] | ["v1", "admin", "accounts", id, _, ..] => {
            return Some(id.to_string());
        }
        ["v1", "admin", "accounts"] if parts.method == axum::http::Method::POST => {
            let v: serde_json::Value = serde_json::from_slice(body).ok()?;
            return v.get("id")?.as_str().map(String::from);
        }
        _ => {}
    }
    let query: axum::extract::Query<std::collections::HashMap<String, String>> =
        axum::extract::Query::try_from_uri(&parts.uri).ok()?;
    query.0.get("account").cloned()
}

/// Sends the request to each of `targets` in turn; the first answer that is not 401 (or the
/// last answer) is returned as it came.
async fn forward(routes: &ShardRoutes, targets: &[String], parts: &Parts, body: Bytes) -> Response {
    let mut last: Option<Response> = None;
    for base in targets {
        let url = format!(
            "{}{}",
            base.trim_end_matches('/'),
            parts
                .uri
                .path_and_query()
                .map_or(parts.uri.path(), |p| p.as_str())
        );
        let mut req = routes.client.request(parts.method.clone(), &url);
        for (name, value) in &parts.headers {
            if name != axum::http::header::HOST && name != axum::http::header::CONTENT_LENGTH {
                req = req.header(name, value);
            }
        }
        req = req
            .header(FORWARDED_BY, routes.shard.to_string())
            .body(body.clone());
        let answer = match req.send().await {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(url = %url, error = %e, "forwarding to a shard failed");
                last = Some(
                    ApiError::Unavailable(format!("the shard at {base} did not answer: {e}"))
                        .into_response(),
                );
                continue;
            }
        };
        let status = answer.status();
        let mut out = Response::builder().status(status);
        for (name, value) in answer.headers() {
            if name != axum::http::header::CONTENT_LENGTH
                && name != axum::http::header::TRANSFER_ENCODING
            {
                out = out.header(name, value);
            }
        }
        let bytes = answer.bytes().await.unwrap_or_default();
        let response = out
            .body(Body::from(bytes))
            .unwrap_or_else(|_| ApiError::Internal("a shard's answer".into()).into_response());
        if status != axum::http::StatusCode::UNAUTHORIZED {
            return response;
        }
        last = Some(response);
    }
    last.unwrap_or_else(|| ApiError::Unavailable("no shard to forward to".into()).into_response())
}
