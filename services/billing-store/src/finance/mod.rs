//! Closes, issued invoices and credit notes, adjustments, wallets, settlement, the journal and verification.

pub(crate) mod adjust;
pub(crate) mod allocation;
pub(crate) mod close;
pub(crate) mod close_error;
pub(crate) mod documents;
pub(crate) mod journal;
pub(crate) mod profiles;
pub(crate) mod settle;
pub(crate) mod verify;
pub(crate) mod verify_money;
pub(crate) mod wallet;
pub(crate) mod wallet_rows;
