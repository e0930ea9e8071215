//! Accounts, API keys and their audit, idempotency keys.

pub(crate) mod accounts;
pub mod actor;
pub(crate) mod api_keys;
pub mod idempotency;
pub(crate) mod keys;
pub(crate) mod settings;
