//! The connection layer: the store, its handles, the drivers, the dialect of each backend and the SQL helpers.

pub(crate) mod backend;
pub mod db;
pub(crate) mod dialect;
pub(crate) mod error;
pub(crate) mod failpoints;
pub(crate) mod handles;
pub(crate) mod locks;
pub(crate) mod sql;
pub(crate) mod store;
pub(crate) mod words;
