//! Per-key ledgers as stored, their cache between batches and the rental state.

pub(crate) mod ledger_cache;
pub(crate) mod ledgers;
pub(crate) mod rental;
