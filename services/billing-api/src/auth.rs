//! Who is calling: the bearer token decides. Tokens and keys are compared by their SHA-256
//! hashes; the secrets themselves are never stored or logged.
//!
//! A customer key (issue 27, roles and scopes) has a **scope**, the account it was issued for
//! and every account below it in the organization (`billing_core::pricebook::Org::within`,
//! the tree of `billing_store`'s `AdminHandle::org`), and a **role** ([`Role`]): what it may
//! do there ([`May::may`], the one table of permissions). A customer route answers for the
//! key's own account, or for the account its `account` parameter names
//! ([`Principal::scoped`]): one outside the scope is a 404 exactly like an unknown account
//! (nothing tells that it exists), one inside it that the role may not act on a 403 naming
//! the role and what it lacks.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use billing_store::hash_key;

/// A customer key's role, as stored with the key (`owner` for the keys made before roles).
pub use billing_store::KeyRole as Role;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Admin,
    Ingest,
    /// A customer API key: its scope and role come only from the key.
    Customer(CustomerKey),
}

/// A live customer key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerKey {
    /// The account it was issued for: the root of its scope.
    pub account: String,
    pub role: Role,
    pub key_id: billing_store::ApiKeyId,
}

/// What a customer route does, as the permission table ([`May::may`]) knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `GET /v1/prices`: the price list (with the account's discounts).
    Prices,
    /// `GET /v1/usage`.
    Usage,
    /// `GET /v1/cost/current`, `POST /v1/estimate`, `GET /v1/quota/decisions`: the cost to
    /// date, what a lease would cost, the quota decisions taken on that cost.
    Cost,
    /// `GET /v1/invoices`, `GET /v1/invoices/{id}` (JSON, CSV, HTML, PDF).
    Invoices,
    /// The allocation of invoices to accounts and projects (section 18).
    Allocation,
    /// `GET /v1/organization`: the subtree's nodes with their cost and budget.
    Organization,
    /// `GET /v1/balance`: the wallet, prepaid balance, live holds and terms.
    Wallet,
    /// Exports of the subtree's documents.
    Export,
    /// `POST /v1/authorize`, `POST /v1/holds/{id}/extend|release`: spending.
    Spend,
    /// `/v1/accounts/{id}/keys...`: issuing, listing, rotating and revoking keys.
    ManageKeys,
    /// Issue 28: `GET /v1/accounts/{id}/notify`, `GET /v1/notifications`, the webhook
    /// endpoints and their delivery log: reading the notifications and their settings.
    ReadNotify,
    /// Issue 28: budgets, alerts, webhook endpoints (create, change, rotate, resend, test).
    ManageNotify,
}

impl Action {
    /// What the action is, for a 403's message.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Prices => "read prices",
            Action::Usage => "read usage",
            Action::Cost => "read cost",
            Action::Invoices => "read invoices",
            Action::Allocation => "read the allocation",
            Action::Organization => "read the organization",
            Action::Wallet => "read the wallet",
            Action::Export => "export",
            Action::Spend => "authorize spending or change holds",
            Action::ManageKeys => "manage API keys",
            Action::ReadNotify => "read notifications",
            Action::ManageNotify => "manage budgets, alerts and webhooks",
        }
    }
}

/// The permissions of a role: the one table (README, "Keys and roles", mirrors it).
///
/// | action      | owner | finance | viewer | member |
/// |-------------|-------|---------|--------|--------|
/// | Prices      | yes   | yes     | yes    | yes    |
/// | Usage       | yes   |         | yes    | yes    |
/// | Cost        | yes   | yes     | yes    | yes    |
/// | Invoices    | yes   | yes     |        | yes    |
/// | Allocation  | yes   | yes     |        | yes    |
/// | Organization| yes   | yes     |        |        |
/// | Wallet      | yes   | yes     |        | yes    |
/// | Export      | yes   | yes     |        | yes    |
/// | Spend       | yes   |         |        | yes    |
/// | ManageKeys  | yes   |         |        |        |
/// | ReadNotify  | yes   | yes     | yes    | yes    |
/// | ManageNotify| yes   | yes     |        | yes    |
///
/// The scope is apart from it: an owner, finance or viewer key acts on its account and every
/// account below it; a member key on its own account only (where it may do everything but
/// manage keys and read the organization). A role never issues a key of another role above its own: only owners manage
/// keys, and owner is the top.
pub trait May {
    fn may(self, action: Action) -> bool;
}

impl May for Role {
    fn may(self, action: Action) -> bool {
        use Action::*;
        match self {
            Role::Owner => true,
            Role::Finance => matches!(
                action,
                Prices
                    | Cost
                    | Invoices
                    | Allocation
                    | Organization
                    | Wallet
                    | Export
                    | ReadNotify
                    | ManageNotify
            ),
            Role::Viewer => matches!(action, Prices | Usage | Cost | ReadNotify),
            Role::Member => !matches!(action, ManageKeys | Organization),
        }
    }
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

    /// The key's own account (a customer route that is not scoped: see [`Self::scoped`]).
    pub fn customer(&self) -> Result<&str, ApiError> {
        Ok(&self.customer_key()?.account)
    }

    /// The customer key, or the 403 of a route that takes one.
    pub fn customer_key(&self) -> Result<&CustomerKey, ApiError> {
        match self {
            Principal::Customer(k) => Ok(k),
            _ => Err(ApiError::Forbidden(
                "this route takes a customer API key".into(),
            )),
        }
    }

    /// The account a customer route answers for and may `action` on: `asked` (the route's
    /// `account` parameter; absent or empty: the key's own account) when it is within the
    /// key's scope ([`CustomerKey::reaches`]), else a 404 worded as for an unknown account;
    /// then a 403 naming the role when the role may not `action` ([`May::may`]). A 403 for
    /// the admin and ingest tokens, as [`Self::customer`].
    pub async fn scoped(
        &self,
        s: &AppState,
        asked: Option<&str>,
        action: Action,
    ) -> Result<String, ApiError> {
        let key = self.customer_key()?;
        let account = key.reaches(s, asked).await?;
        key.may(action)?;
        Ok(account)
    }
}

impl CustomerKey {
    /// `asked` (absent or empty: the key's own account) when the key's scope holds it: the
    /// key's account or, unless the key is a member's, an account below it in the current
    /// organization. Else the 404 of an unknown account.
    pub async fn reaches(&self, s: &AppState, asked: Option<&str>) -> Result<String, ApiError> {
        let asked = match asked.filter(|a| !a.is_empty()) {
            None => return Ok(self.account.clone()),
            Some(a) if a == self.account => return Ok(self.account.clone()),
            Some(a) => a,
        };
        if self.role != Role::Member
            && s.store
                .admin()
                .org((s.clock)())
                .await?
                .within(&self.account, asked)
        {
            return Ok(asked.to_string());
        }
        Err(unknown_account(asked))
    }

    /// The accounts the key sees, to filter rows of several accounts (an allocation's) by:
    /// its account and, unless it is a member's, every account below it.
    pub async fn view(&self, s: &AppState) -> Result<ScopeView, ApiError> {
        let org = match self.role {
            Role::Member => None,
            _ => Some(s.store.admin().org((s.clock)()).await?),
        };
        Ok(ScopeView {
            account: self.account.clone(),
            org,
        })
    }

    /// A 403 naming the role when it may not `action`.
    pub fn may(&self, action: Action) -> Result<(), ApiError> {
        if self.role.may(action) {
            return Ok(());
        }
        Err(ApiError::Forbidden(format!(
            "a {} key may not {}",
            self.role,
            action.describe()
        )))
    }
}

/// What a key sees ([`CustomerKey::view`]).
#[derive(Debug, Clone)]
pub struct ScopeView {
    account: String,
    /// The tree (None: a member key, which sees its own account only).
    org: Option<billing_core::pricebook::Org>,
}

impl ScopeView {
    /// Whether the key's scope holds `account`.
    pub fn holds(&self, account: &str) -> bool {
        match &self.org {
            None => account == self.account,
            Some(org) => org.within(&self.account, account),
        }
    }
}

/// The 404 of an account a caller cannot see: unknown, or outside its key's scope (the same
/// words, so that nothing tells the two apart).
pub fn unknown_account(account: &str) -> ApiError {
    ApiError::NotFound(format!("unknown account {account:?}"))
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
            match state.store.admin().key_grant(&h).await? {
                Some(g) => Principal::Customer(CustomerKey {
                    account: g.account,
                    role: g.role,
                    key_id: billing_store::key_id_of(&h),
                }),
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
