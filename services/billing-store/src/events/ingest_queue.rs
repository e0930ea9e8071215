//! An ingest request waiting for the next group commit (see `LogHandle::ingest`).

use crate::conn::error::Result;
use crate::events::batch::Outcome;

/// An ingest request waiting for the next group commit (see [`Store::ingest`]).
pub(crate) struct QueuedIngest {
    pub(crate) records: Vec<Vec<u8>>,
    pub(crate) now_ms: i64,
    pub(crate) answer: tokio::sync::oneshot::Sender<Result<Vec<Outcome>>>,
}
