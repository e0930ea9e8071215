//! Quotas, authorization holds, spend and quota decisions.

pub(crate) mod authorize;
pub(crate) mod decisions;
pub(crate) mod holds;
pub(crate) mod limits;
pub(crate) mod nodes;
pub(crate) mod spent;
