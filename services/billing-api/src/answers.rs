//! The usage answers kept per (account, query) between folds.

/// Usage answers kept per (account, query) (one key: the account, a newline, the query's
/// normalized parameters) under the ledger token they were computed for
/// (see [`billing_store::Store::ledger_token`]): a dashboard polling the same range gets the
/// same bytes until a fold moves the account. At most [`MAX_KEPT_ANSWERS`] are kept (all are
/// dropped when full: a cheap bound, refilled by the next requests).
#[derive(Default)]
pub struct Answers {
    kept: std::sync::Mutex<std::collections::HashMap<String, (i64, axum::body::Bytes)>>,
    /// Per (account, query), the lock of whoever computes its answer now.
    flights: std::sync::Mutex<std::collections::HashMap<String, Flight>>,
}

type Flight = std::sync::Arc<tokio::sync::Mutex<()>>;

/// Most usage answers [`Answers`] keeps (a page is at most
/// [`billing_core::ledger::usage::MAX_CELLS`] cells).
pub const MAX_KEPT_ANSWERS: usize = 4_096;

/// Most bytes of one kept answer (larger answers are computed every time).
const MAX_KEPT_BYTES: usize = 256 * 1024;

impl Answers {
    pub(crate) fn get(&self, asked: &str, token: i64) -> Option<axum::body::Bytes> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.get(asked) {
            Some((t, body)) if *t == token => Some(body.clone()),
            _ => None,
        }
    }

    /// The computation lock of (account, query); locks nobody holds are dropped as the map
    /// grows past [`MAX_KEPT_ANSWERS`].
    pub(crate) fn flight(&self, asked: &str) -> Flight {
        let mut flights = self.flights.lock().unwrap_or_else(|e| e.into_inner());
        if flights.len() >= MAX_KEPT_ANSWERS {
            flights.retain(|_, f| std::sync::Arc::strong_count(f) > 1);
        }
        if let Some(f) = flights.get(asked) {
            return f.clone();
        }
        flights.entry(asked.to_string()).or_default().clone()
    }

    pub(crate) fn put(&self, asked: String, token: i64, body: axum::body::Bytes) {
        if body.len() > MAX_KEPT_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_KEPT_ANSWERS {
            kept.clear();
        }
        kept.insert(asked, (token, body));
    }
}
