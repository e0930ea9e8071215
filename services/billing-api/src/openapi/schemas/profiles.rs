//! Seller profiles, account terms and the caller's identity.

#![allow(dead_code)]
use utoipa::ToSchema;

/// The buyer's (or the seller's) fields for a 增值税发票; optional fields may be omitted
/// or null; no control characters; no other field.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// 名称, 1 to 200 characters.
    pub name: String,
    /// 纳税人识别号: 15, 17, 18 or 20 of 0-9 A-Z.
    pub tax_id: Option<String>,
    pub address: Option<String>,
    pub phone: Option<String>,
    /// 开户行.
    pub bank: Option<String>,
    /// 账号.
    pub bank_account: Option<String>,
    pub email: Option<String>,
}

#[derive(ToSchema)]
pub struct ProfileSet {
    /// Only for an account's profile.
    #[schema(required = false)]
    pub account: String,
    pub profile: Profile,
    /// False when it was set so already.
    pub changed: bool,
}

#[derive(ToSchema)]
pub struct ProfileShown {
    /// Only for an account's profile.
    #[schema(required = false)]
    pub account: String,
    /// Null when none was set.
    #[schema(required = true)]
    pub profile: Option<Profile>,
    #[schema(required = true)]
    pub updated_at_ms: Option<i64>,
}

#[derive(ToSchema)]
pub struct TermSet {
    pub account: String,
    pub kind: String,
    pub term_id: String,
    /// Only for a PUT: the fields set.
    #[schema(required = false, value_type = Object)]
    pub body: (),
    /// False when nothing changed.
    pub changed: bool,
}

/// `GET /v1/me`: who the bearer token is.
#[derive(ToSchema)]
pub struct Me {
    pub role: Role,
    /// A customer key's account; null for the admin and ingest tokens.
    #[schema(required = true)]
    pub account: Option<String>,
    /// `admin`, `ingest`, or a customer key's key id.
    pub name: String,
    /// A customer key's id (the first 16 hex digits of its SHA-256, as the key list names
    /// it); null for the admin and ingest tokens.
    #[schema(required = true)]
    pub key_id: Option<String>,
    /// A customer key's role (issue 27); absent for the admin and ingest tokens.
    #[schema(schema_with = super::common::key_role)]
    pub key_role: Option<String>,
    /// A customer key's scope: the account it was issued for, whose subtree it reaches (a
    /// member key: that account only); absent for the admin and ingest tokens.
    pub scope: Option<String>,
}

#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Admin,
    Ingest,
    Customer,
}
