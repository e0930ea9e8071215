//! The shapes of the API's JSON (see `openapi.rs`'s header). Decimals are [`Decimal`]: a JSON
//! string such as `"12.30"`, never a number.

#![allow(dead_code)]

mod accounts;
mod common;
mod events;
mod invoices;
mod money;
mod notify;
mod prices;
mod profiles;
mod usage;
mod webhooks;

pub use accounts::*;
pub use common::*;
pub use events::*;
pub use invoices::*;
pub use money::*;
pub use notify::*;
pub use prices::*;
pub use profiles::*;
pub use usage::*;
pub use webhooks::*;
