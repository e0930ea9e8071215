//! `Idempotency-Key` on every admin POST, PUT and DELETE (issue 14), as Stripe's API does:
//! the first request with a key runs and its answer is kept (in the database, so every engine
//! sees it); a retry with the same key and the same request (method, path and query, body)
//! gets the same answer again with `Idempotent-Replayed: true`, without running again (the
//! content type is part of the request; only the answer of a request whose handler ran is
//! kept: never a 401, 429, 415 or 400 given by an extractor before it, issue 24.4); the
//! same key with a different request is refused (422); a retry arriving while the first is
//! still running waits for its answer (up to [`WAIT`], then 409). An answer with a 5xx is not
//! kept: the retry runs again. A claim whose request died without an answer (an engine crash,
//! a broken database connection) is taken over by a retry once it is
//! `billing_store::idempotency::STALE_CLAIM_MS` old. Keys are the admin's (the only principal
//! of these routes).

use crate::error::ApiError;
use crate::error::NotRun;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use billing_store::{Claim, hash_key};
use std::time::Duration;

/// How long a retry waits for the first request with its key.
pub const WAIT: Duration = Duration::from_secs(30);

/// Most bytes of an answer kept.
const MAX_KEPT: usize = 16 * 1024 * 1024;

/// A key: 1 to 255 printable ASCII characters.
fn valid(key: &str) -> bool {
    (1..=255).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

/// What makes two requests with one key the same request: method, path and query, content
/// type (issue 24.4: the same bytes as text/plain and as JSON are two requests) and body.
pub fn fingerprint(method: &str, uri: &str, content_type: Option<&[u8]>, body: &[u8]) -> String {
    hash_key(&format!(
        "{method} {uri}\n{}\n{}",
        hex::encode(content_type.unwrap_or_default()),
        hex::encode(body)
    ))
}

pub async fn layer(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let applies = matches!(*req.method(), Method::POST | Method::PUT | Method::DELETE)
        && req.uri().path().starts_with("/v1/admin/");
    let Some(key) = req.headers().get("idempotency-key") else {
        return next.run(req).await;
    };
    if !applies {
        return next.run(req).await;
    }
    let Some(key) = key.to_str().ok().filter(|k| valid(k)).map(String::from) else {
        return ApiError::BadRequest(
            "Idempotency-Key must be 1 to 255 printable ASCII characters".into(),
        )
        .into_response();
    };
    // Only the admin's requests are kept; anyone else is refused by the route itself.
    let admin = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .is_some_and(|t| crate::auth::same(&hash_key(t.trim()), &s.admin_token_hash));
    if !admin {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, crate::limits::MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::TooLarge(format!(
                "the body is over {} bytes",
                crate::limits::MAX_BODY_BYTES
            ))
            .into_response();
        }
    };
    let content_type = parts.headers.get(axum::http::header::CONTENT_TYPE);
    let fingerprint = fingerprint(
        parts.method.as_str(),
        &parts.uri.to_string(),
        content_type.map(HeaderValue::as_bytes),
        &bytes,
    );
    let started = std::time::Instant::now();
    loop {
        let claim = s
            .store
            .admin()
            .idempotency_claim("admin", &key, &fingerprint, (s.clock)())
            .await;
        match claim {
            Err(e) => return ApiError::from(e).into_response(),
            Ok(Claim::Run) => {
                let response = next
                    .run(Request::from_parts(parts, Body::from(bytes)))
                    .await;
                return keep(&s, &key, response).await;
            }
            Ok(Claim::Mismatch) => {
                return ApiError::Unprocessable(format!(
                    "Idempotency-Key {key:?} was used with a different request"
                ))
                .into_response();
            }
            Ok(Claim::Running) if started.elapsed() < WAIT => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(Claim::Running) => {
                return ApiError::Conflict(format!(
                    "the first request with Idempotency-Key {key:?} is still running; retry later"
                ))
                .into_response();
            }
            Ok(Claim::Done(status, content_type, body)) => {
                let mut r = Response::new(Body::from(body));
                *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
                if let Some(ct) = content_type.and_then(|c| HeaderValue::from_str(&c).ok()) {
                    r.headers_mut().insert(axum::http::header::CONTENT_TYPE, ct);
                }
                r.headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("true"));
                return r;
            }
        }
    }
}

/// Whether the route's handler ran (issue 24.4). Not when the request was refused before the
/// route did anything: `ApiError::Refused` marks its answer [`NotRun`] (unknown token, rate
/// limited, a body of another content type or not the JSON the route takes); axum's own
/// rejections (a path or query that does not parse, an unreadable body) are the only 4xx
/// answers that are not JSON. Such an answer is never kept: the same key with a corrected or
/// later request runs.
fn ran(parts: &axum::http::response::Parts) -> bool {
    if parts.extensions.get::<NotRun>().is_some() {
        return false;
    }
    let json = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    !parts.status.is_client_error() || json
}

/// Keeps the first request's answer (unless a 5xx, which a retry runs again, or the answer of
/// a request whose handler never ran) and answers it.
async fn keep(s: &AppState, key: &str, response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_KEPT).await {
        Ok(b) => b,
        Err(e) => {
            let _ = s.store.admin().idempotency_forget("admin", key).await;
            return ApiError::Internal(format!("answer not kept: {e}")).into_response();
        }
    };
    let kept = if parts.status.is_server_error() || !ran(&parts) {
        s.store.admin().idempotency_forget("admin", key).await
    } else {
        let ct = parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        s.store
            .admin()
            .idempotency_finish("admin", key, (parts.status.as_u16(), ct, &bytes))
            .await
    };
    if let Err(e) = kept {
        // The effect happened; only its answer could not be kept: say so (a retry would
        // run again).
        tracing::error!(error = %e, key, "idempotency answer not kept");
    }
    Response::from_parts(parts, Body::from(bytes))
}
