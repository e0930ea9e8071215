//! Accounts, API keys, the audit log, price book versions.

#![allow(dead_code)]
use super::money::*;
use utoipa::ToSchema;

/// `POST /v1/admin/accounts`: the API key is shown this once.
#[derive(ToSchema)]
pub struct AccountCreated {
    pub id: String,
    /// The account's bearer token (`gbk_...`) for its own usage, cost and invoices.
    pub api_key: String,
}

/// `GET /v1/admin/accounts`: one page of registered accounts, in id order.
#[derive(ToSchema)]
pub struct AccountList {
    pub accounts: Vec<AccountSummary>,
    /// Ask again with `after` set to it for the next page; null on the last page.
    #[schema(required = true)]
    pub next_after: Option<String>,
}

#[derive(ToSchema)]
pub struct AccountSummary {
    pub id: String,
    pub created_at: String,
    /// Null when no quotas were ever set.
    #[schema(required = true)]
    pub quotas: Option<Quotas>,
    #[schema(required = true)]
    pub quotas_updated_at: Option<String>,
}

/// `POST /v1/admin/accounts/{id}/keys`: another key, shown this once.
#[derive(ToSchema)]
pub struct KeyCreated {
    pub account: String,
    /// Names the key in lists and revocations: the first 16 hex digits of its hash.
    pub key_id: String,
    #[schema(schema_with = super::common::key_role)]
    pub role: String,
    pub api_key: String,
}

/// `{"role"}` of a key being issued (issue 27); the body may be empty (an owner key).
#[derive(ToSchema)]
pub struct KeyRequest {
    /// `owner` (default), `finance`, `viewer` or `member`.
    #[schema(schema_with = super::common::key_role)]
    pub role: Option<String>,
}

/// `POST .../keys/{key_id}/rotate`: the new key, shown this once; the old one is revoked.
#[derive(ToSchema)]
pub struct KeyRotated {
    pub account: String,
    /// The new key's id.
    pub key_id: String,
    /// The old key's role, which the new one has.
    #[schema(schema_with = super::common::key_role)]
    pub role: String,
    pub api_key: String,
    /// The key revoked by the rotation.
    pub revoked_key_id: String,
}

#[derive(ToSchema)]
pub struct KeyList {
    pub account: String,
    pub keys: Vec<KeyInfo>,
}

#[derive(ToSchema)]
pub struct KeyInfo {
    pub key_id: String,
    #[schema(schema_with = super::common::key_role)]
    pub role: String,
    pub created_at: String,
    /// Who made it: `admin` or `key:<key id>`; null for keys made before roles (issue 27).
    #[schema(required = true)]
    pub created_by: Option<String>,
    /// When it was revoked; null while it works.
    #[schema(required = true)]
    pub revoked_at: Option<String>,
}

/// `GET /v1/admin/audit`: admin changes in order, one page.
#[derive(ToSchema)]
pub struct AuditLog {
    pub entries: Vec<AuditEntry>,
    /// Ask again with `after` set to it for the next page; null on the last page.
    #[schema(required = true)]
    pub next_after: Option<i64>,
}

#[derive(ToSchema)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: String,
    /// Always `admin`: only the admin token makes changes.
    pub actor: String,
    /// The command's type (`pricebook.put`, `account.create`, `wallet.movement`, ...).
    pub action: String,
    /// The command as recorded.
    #[schema(value_type = Object)]
    pub command: (),
}

/// `PUT /v1/admin/pricebook`: the version stored.
#[derive(ToSchema)]
pub struct PriceBookVersion {
    pub version: i64,
}
