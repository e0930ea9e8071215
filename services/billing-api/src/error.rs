//! One error type for every route: 4xx with a message the client can act on, 5xx with a
//! generic body while the cause is logged.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Unprocessable(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Timeout(String),
    #[error("too many requests for this key: retry after {retry_after_s} s")]
    RateLimited { retry_after_s: u64 },
    #[error("internal error: {0}")]
    Internal(String),
    /// The request was refused before the route did anything (issue 24.4): an unknown token,
    /// rate limited, a body of another content type or not the JSON the route takes. Answered
    /// as the inner error; an `Idempotency-Key` never keeps it, so the same key with a
    /// corrected or later request runs.
    #[error("{0}")]
    Refused(Box<ApiError>),
}

impl ApiError {
    /// `self`, marked as given before the route did anything ([`ApiError::Refused`]).
    pub fn refused(self) -> ApiError {
        match self {
            r @ ApiError::Refused(_) => r,
            other => ApiError::Refused(Box::new(other)),
        }
    }

    fn parts(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ApiError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            ApiError::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
            ApiError::Unprocessable(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            ApiError::UnsupportedMediaType(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            ApiError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Timeout(_) => (StatusCode::REQUEST_TIMEOUT, "timeout"),
            ApiError::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            ApiError::Refused(inner) => inner.parts(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Refused(inner) = self {
            let mut r = inner.into_response();
            r.extensions_mut().insert(NotRun);
            return r;
        }
        let (status, code) = self.parts();
        let message = match &self {
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                "internal error; the cause is in the server log".to_string()
            }
            other => other.to_string(),
        };
        let mut response =
            (status, Json(json!({ "error": code, "message": message }))).into_response();
        if let ApiError::RateLimited { retry_after_s } = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after_s),
            );
        }
        response
    }
}

/// Marks an answer given before the route did anything (issue 24.4): see
/// [`ApiError::Refused`]. The `Idempotency-Key` layer never keeps such an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NotRun;

impl From<billing_store::StoreError> for ApiError {
    fn from(e: billing_store::StoreError) -> Self {
        use billing_store::StoreError as S;
        match e {
            S::AccountExists(_) | S::PaidByPayer { .. } | S::NoAllocation { .. } => {
                ApiError::Conflict(e.to_string())
            }
            S::PriceBook(_) => ApiError::Unprocessable(e.to_string()),
            S::BatchTooLarge(_) => ApiError::TooLarge(e.to_string()),
            S::Fenced { .. } | S::Group(_) | S::TreeMoving { .. } => {
                ApiError::Unavailable(e.to_string())
            }
            S::Move { .. } | S::Directory(_) | S::SplitTree(_) => ApiError::Conflict(e.to_string()),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<billing_store::HoldError> for ApiError {
    fn from(e: billing_store::HoldError) -> Self {
        use billing_store::HoldError as H;
        match e {
            H::UnknownAccount(_) | H::UnknownHold(_) => ApiError::NotFound(e.to_string()),
            H::UnknownSku(_) | H::Invalid(_) => ApiError::Unprocessable(e.to_string()),
            H::NoPriceBook | H::NotLive { .. } => ApiError::Conflict(e.to_string()),
            H::Store(s) => s.into(),
        }
    }
}
