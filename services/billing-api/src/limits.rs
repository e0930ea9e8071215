//! Bounds on what callers can make the server do: per-key rate limits, and the HTTP server's
//! own limits (header and body read timeouts, a connection limit).
//!
//! - **Rate limits**: a token bucket per principal (each customer API key, not its account:
//!   a second key of the account has its own; the ingest token, the admin token), refilled continuously; an empty bucket answers 429 with
//!   `Retry-After` (whole seconds until a token is back). Customer keys and the ingest token
//!   have separate limits ([`RateLimits`]); `None` means unlimited. Buckets live in the
//!   process: with several engines each enforces its own share.
//! - **Server limits** ([`ServerLimits`], [`serve`]): a connection that has not sent its
//!   request headers within `header_read_timeout` is closed; a request body not received
//!   within `body_read_timeout` is answered 408; at most `max_connections` connections are
//!   served at once (more wait in the kernel's accept queue). 1,000 half-open connections were
//!   once held for over a minute each, and a partial body for 45 s.

use crate::error::ApiError;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest request body: an ingest batch of up to 10,000 events.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Requests per second and burst of one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_second: u32,
    pub burst: u32,
}

/// Rate limits per kind of principal (`None`: unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Each customer API key (its own bucket, not shared with the account's other keys).
    pub customer: Option<Rate>,
    /// The ingest token (node agents, rental backends).
    pub ingest: Option<Rate>,
    /// The admin token.
    pub admin: Option<Rate>,
}

impl RateLimits {
    /// What `gpubill serve` uses unless told otherwise: 100 requests/s (burst 200) per
    /// customer key, 5,000/s (burst 10,000) for the ingest and admin tokens.
    pub fn serve_defaults() -> RateLimits {
        RateLimits {
            customer: Some(Rate {
                per_second: 100,
                burst: 200,
            }),
            ingest: Some(Rate {
                per_second: 5_000,
                burst: 10_000,
            }),
            admin: Some(Rate {
                per_second: 5_000,
                burst: 10_000,
            }),
        }
    }
}

/// Token buckets by principal. Tokens are kept in millionths (integer arithmetic).
#[derive(Debug, Default)]
pub struct RateLimiter {
    pub limits: RateLimits,
    buckets: Mutex<HashMap<String, (u64, Instant)>>,
}

const MICRO: u64 = 1_000_000;

impl RateLimiter {
    pub fn new(limits: RateLimits) -> RateLimiter {
        RateLimiter {
            limits,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token of `who`'s bucket at `rate`; `Err` with the seconds to wait.
    pub fn take(&self, who: &str, rate: Option<Rate>, now: Instant) -> Result<(), u64> {
        let Some(rate) = rate else {
            return Ok(());
        };
        let per_s = u64::from(rate.per_second.max(1));
        let cap = u64::from(rate.burst.max(1)) * MICRO;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.contains_key(who) {
            buckets.insert(who.to_string(), (cap, now));
        }
        let Some((tokens, last)) = buckets.get_mut(who) else {
            return Ok(());
        };
        let elapsed_us = now.saturating_duration_since(*last).as_micros() as u64;
        *tokens = (*tokens)
            .saturating_add(elapsed_us.saturating_mul(per_s))
            .min(cap);
        *last = now;
        if *tokens >= MICRO {
            *tokens -= MICRO;
            Ok(())
        } else {
            let missing = MICRO - *tokens;
            Err(missing.div_ceil(per_s * MICRO).max(1))
        }
    }
}

/// Limits of the HTTP server itself.
#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    pub max_connections: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 1024,
        }
    }
}

/// Reads the whole request body within `limit` (time) and the body size limit, before the
/// handler runs: 408 when the client is too slow, 413 when it sends too much.
pub async fn read_body_in_time(limit: Duration, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, MAX_BODY_BYTES);
    let bytes = match tokio::time::timeout(limit, read).await {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return ApiError::TooLarge(format!(
                "request body over the limit of {} bytes",
                MAX_BODY_BYTES
            ))
            .into_response();
        }
        Err(_) => {
            return ApiError::Timeout(format!(
                "the request body was not received within {} s",
                limit.as_secs()
            ))
            .into_response();
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Serves `app` on `listener` with `limits` until `shutdown` resolves; then stops accepting
/// and gives open connections up to 10 s to finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let app = app.layer(axum::middleware::from_fn(move |req, next| {
        read_body_in_time(limits.body_read_timeout, req, next)
    }));
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => break,
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, _peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Small JSON answers go out at once (Nagle's algorithm with delayed ACKs holds them
        // for up to ~40 ms).
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => { let _ = r; }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    let _ = stop_tx.send(true);
    let all = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(10), permits.acquire_many(all)).await;
    Ok(())
}

/// Gives every 4xx/5xx that is not already JSON (axum's own rejections: a query string that
/// does not parse, a body over the limit, a wrong method, an unknown route) the API's error
/// shape, `{"error": code, "message": text}`.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let code = match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::TOO_MANY_REQUESTS => "rate_limited",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        s if s.is_server_error() => "internal",
        _ => "error",
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let mut out = (
        status,
        axum::Json(serde_json::json!({ "error": code, "message": message })),
    )
        .into_response();
    for (name, value) in parts.headers.iter() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let l = RateLimiter::new(RateLimits::default());
        let rate = Some(Rate {
            per_second: 2,
            burst: 3,
        });
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(l.take("k", rate, t0), Ok(()));
        }
        assert_eq!(l.take("k", rate, t0), Err(1));
        // Another key has its own bucket.
        assert_eq!(l.take("other", rate, t0), Ok(()));
        // Half a second refills one token (2/s).
        assert_eq!(l.take("k", rate, t0 + Duration::from_millis(500)), Ok(()));
        assert_eq!(l.take("k", rate, t0 + Duration::from_millis(500)), Err(1));
        assert_eq!(l.take("k", None, t0), Ok(()));
    }
}
