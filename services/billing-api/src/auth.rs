//! Who is calling: the bearer token decides. Tokens and keys are compared by their SHA-256
//! hashes; the secrets themselves are never stored or logged.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use billing_store::hash_key;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Admin,
    Ingest,
    /// A customer API key: the account comes only from the key.
    Customer(String),
}

impl Principal {
    pub fn admin(&self) -> Result<(), ApiError> {
        match self {
            Principal::Admin => Ok(()),
            _ => Err(ApiError::Forbidden(
                "this route needs the admin token".into(),
            )),
        }
    }

    pub fn ingest(&self) -> Result<(), ApiError> {
        match self {
            Principal::Admin | Principal::Ingest => Ok(()),
            Principal::Customer(_) => Err(ApiError::Forbidden(
                "ingest needs the admin or an ingest token, not a customer key".into(),
            )),
        }
    }

    pub fn customer(&self) -> Result<&str, ApiError> {
        match self {
            Principal::Customer(a) => Ok(a),
            _ => Err(ApiError::Forbidden(
                "this route takes a customer API key".into(),
            )),
        }
    }
}

/// Equal-time comparison of two hex hashes.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl FromRequestParts<AppState> for Principal {
    /// Always [`ApiError::Refused`]: never kept under an `Idempotency-Key`.
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| {
                ApiError::Unauthorized("missing Authorization: Bearer <token>".into()).refused()
            })?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::Unauthorized("Authorization must be \"Bearer <token>\"".into()).refused()
            })?;
        let h = hash_key(token);
        let principal = if same(&h, &state.admin_token_hash) {
            Principal::Admin
        } else if state
            .ingest_token_hash
            .as_deref()
            .is_some_and(|i| same(&h, i))
        {
            Principal::Ingest
        } else {
            match state.store.admin().account_for_key(&h).await? {
                Some(account) => Principal::Customer(account),
                None => return Err(ApiError::Unauthorized("unknown token".into()).refused()),
            }
        };
        let limits = state.limiter.limits;
        let (bucket, rate) = match &principal {
            Principal::Admin => ("admin".to_string(), limits.admin),
            Principal::Ingest => ("ingest".to_string(), limits.ingest),
            // Per key, not per account: a second key of the same account has its own bucket
            // (README, `--rate-limit-customer`). Keyed by the key's hash, never the secret.
            Principal::Customer(_) => (format!("key:{h}"), limits.customer),
        };
        state
            .limiter
            .take(&bucket, rate, std::time::Instant::now())
            .map_err(|retry_after_s| ApiError::RateLimited { retry_after_s }.refused())?;
        Ok(principal)
    }
}

/// Who a request's commands are by (issue 24.7, the audit log): `admin` for the admin
/// token, `ingest` for the ingest token, `key:<key id>` for any other bearer (a customer
/// key, by its id: never the secret), `anonymous` without one. Decided from the header
/// alone; the route itself still authenticates.
fn actor_of(state: &AppState, headers: &axum::http::HeaderMap) -> String {
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        return "anonymous".to_string();
    };
    let h = hash_key(token);
    if same(&h, &state.admin_token_hash) {
        "admin".to_string()
    } else if state
        .ingest_token_hash
        .as_deref()
        .is_some_and(|i| same(&h, i))
    {
        "ingest".to_string()
    } else {
        format!("key:{}", billing_store::key_id_of(&h))
    }
}

/// Runs the request as its caller's actor ([`billing_store::actor`]).
pub(crate) async fn actor_layer(
    axum::extract::State(s): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let actor = actor_of(&s, req.headers());
    billing_store::actor::as_actor(actor, next.run(req)).await
}

/// A new random secret: `prefix` + 64 hex digits (256 bits from the OS).
pub fn generate_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS RNG failing is not recoverable; refuse to hand out a weak secret.
        panic!("the operating system's random number generator failed");
    }
    format!("{prefix}{}", hex::encode(bytes))
}
