//! Shared shapes: decimals as strings, binary bodies, the error answer.

#![allow(dead_code)]
use utoipa::ToSchema;

/// A decimal number as a JSON string (`"806.85"`, `"-5.00"`, `"0.25"`): money has two
/// decimals, quantities as many as they need; never a JSON number, never an exponent.
#[derive(ToSchema)]
#[schema(pattern = r"^-?[0-9]+(\.[0-9]+)?$")]
pub struct Decimal(String);

/// Bytes as they are: a PDF, or a TOML price book (UTF-8 text, sent as a file).
#[derive(ToSchema)]
#[schema(format = Binary)]
pub struct Binary(String);

/// Every 4xx and 5xx answer.
#[derive(ToSchema)]
pub struct Error {
    /// A stable code: `bad_request`, `unauthorized`, `forbidden`, `not_found`,
    /// `conflict`, `too_large`, `invalid`, `unavailable`, `timeout`, `rate_limited`,
    /// `internal`, `method_not_allowed`, `unsupported_media_type`.
    pub error: String,
    /// What went wrong, for a person (5xx: generic; the cause is in the server log).
    pub message: String,
}

/// A closed list of words of the store's (`billing_store`), from the code itself.
pub(crate) fn words(
    words: impl IntoIterator<Item = &'static str>,
    about: &str,
) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(words))
        .description(Some(about))
        .build()
}

/// `billing_store::MovementKind`, all of them.
pub(crate) fn movement_kind() -> utoipa::openapi::Object {
    use billing_store::MovementKind;
    words(
        MovementKind::ALL.iter().map(|k| k.as_str()),
        "what the movement is",
    )
}

/// `billing_store::PaymentMethod`, all of them.
pub(crate) fn payment_method() -> utoipa::openapi::Object {
    use billing_store::PaymentMethod;
    words(
        PaymentMethod::ALL.iter().map(|m| m.as_str()),
        "how the invoice was paid",
    )
}

/// `billing_store::KeyRole`, all of them (issue 27).
pub(crate) fn key_role() -> utoipa::openapi::Object {
    use billing_store::KeyRole;
    words(
        KeyRole::ALL.iter().map(|r| r.as_str()),
        "what the key may do (README, Keys and roles): owner, finance, viewer or member",
    )
}

/// `billing_store::HoldStatus`, all of them.
pub(crate) fn hold_status() -> utoipa::openapi::Object {
    use billing_store::HoldStatus;
    words(
        HoldStatus::ALL.iter().map(|s| s.as_str()),
        "the hold's state",
    )
}
