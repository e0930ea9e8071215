//! `Idempotency-Key` on every admin POST, PUT and DELETE (issue 14), as Stripe's API does:
//! the first request with a key runs and its answer is kept (in the database, so every engine
//! sees it); a retry with the same key and the same request (method, path and query, body)
//! gets the same answer again with `Idempotent-Replayed: true`, without running again; the
//! same key with a different request is refused (422); a retry arriving while the first is
//! still running waits for its answer (up to [`WAIT`], then 409). An answer with a 5xx is not
//! kept: the retry runs again. A claim whose request died without an answer (an engine crash,
//! a broken database connection) is taken over by a retry once it is
//! `billing_store::idempotency::STALE_CLAIM_MS` old. Keys are the admin's (the only principal
//! of these routes).

use crate::{ApiError, AppState};
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
    let bytes = match axum::body::to_bytes(body, crate::MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::TooLarge(format!("the body is over {} bytes", crate::MAX_BODY_BYTES))
                .into_response();
        }
    };
    let fingerprint = hash_key(&format!(
        "{} {}\n{}",
        parts.method,
        parts.uri,
        hex::encode(&bytes)
    ));
    let started = std::time::Instant::now();
    loop {
        let claim = s
            .store
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

/// Keeps the first request's answer (unless a 5xx, which a retry runs again) and answers it.
async fn keep(s: &AppState, key: &str, response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_KEPT).await {
        Ok(b) => b,
        Err(e) => {
            let _ = s.store.idempotency_forget("admin", key).await;
            return ApiError::Internal(format!("answer not kept: {e}")).into_response();
        }
    };
    let kept = if parts.status.is_server_error() {
        s.store.idempotency_forget("admin", key).await
    } else {
        let ct = parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        s.store
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
