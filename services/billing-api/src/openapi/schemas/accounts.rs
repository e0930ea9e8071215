//! Accounts, API keys, the audit log, price book versions.

#![allow(dead_code)]
use super::common::*;
use super::money::*;
use utoipa::ToSchema;

/// `POST /v1/admin/accounts`: the API key is shown this once.
#[derive(ToSchema)]
pub struct AccountCreated {
    pub id: String,
    /// The account's bearer token (`gbk_...`) for its own usage, cost and invoices.
    pub api_key: String,
    /// Section 18: its parent, when it was created with one.
    #[schema(required = true)]
    pub parent: Option<String>,
}

/// `PATCH /v1/admin/accounts/{id}`: the account's place from the first period not yet closed.
#[derive(ToSchema)]
pub struct AccountMoved {
    pub id: String,
    #[schema(required = true)]
    pub parent: Option<String>,
    /// `self` or `parent`.
    pub pays: String,
    /// False when the account was there already (no command recorded).
    pub changed: bool,
}

/// `GET /v1/allocation`: a payer's invoice split to (account, tag value) cells, or grouped.
#[derive(ToSchema)]
pub struct AllocationReport {
    /// The account whose invoice is allocated (section 18: the payer).
    pub payer: String,
    pub period: String,
    /// `issued` or `provisional`.
    pub status: String,
    pub currency: String,
    /// `cell`, `account` or `tag`.
    pub group_by: String,
    /// The invoice's total (null for a member's key: the invoice is its payer's).
    #[schema(required = true)]
    pub invoice_total: Option<Decimal>,
    /// What the rows shown add up to.
    pub total: Decimal,
    pub rows: Vec<AllocationReportRow>,
}

/// One cell (or group) of an allocation: billing-semantics section 18's row.
#[derive(ToSchema)]
pub struct AllocationReportRow {
    /// The member (`""` when grouped by tag).
    pub account: String,
    /// The allocation tag's value (`""` when grouped by account, or untagged).
    pub tag: String,
    /// The row's non-zero parts of the invoice's lines: identifying fields and `amount`.
    pub lines: Vec<serde_json::Value>,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub credit: Decimal,
    pub tax: Decimal,
    pub total: Decimal,
}

/// `GET /v1/organization`: a subtree's nodes with their cost to date and budget.
#[derive(ToSchema)]
pub struct OrganizationReport {
    /// The root of the subtree shown.
    pub root: String,
    pub period: String,
    /// The currency of the allocations (null when no invoice holds any cost yet).
    #[schema(required = true)]
    pub currency: Option<String>,
    /// The cost of every node shown, added up.
    pub total: Decimal,
    /// Every registered account of the subtree, in id order.
    pub nodes: Vec<OrganizationNode>,
    /// The subtree's allocation cells: (account, project tag value, total).
    pub by_project: Vec<ProjectCost>,
}

/// One account of `GET /v1/organization`.
#[derive(ToSchema)]
pub struct OrganizationNode {
    pub id: String,
    /// Its parent (null at the root shown, and for an account without one).
    #[schema(required = true)]
    pub parent: Option<String>,
    /// Who pays for it (section 18; itself when it pays for itself).
    pub payer: String,
    /// Its own allocated cost to date in the period: the sum of its allocation rows.
    pub cost: Decimal,
    /// The cost of its subtree, itself included.
    pub subtree_cost: Decimal,
    /// Its `spend_limit` (over its subtree), null when none is set.
    #[schema(required = true)]
    pub budget: Option<Decimal>,
}

/// An allocation cell of `GET /v1/organization`.
#[derive(ToSchema)]
pub struct ProjectCost {
    pub account: String,
    /// The allocation tag's value (`""` untagged).
    pub tag: String,
    pub total: Decimal,
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
