//! Who makes a command (issue 24.7): the audit log names it. A request of the API runs as the
//! caller's key (`admin` for the admin token, `key:<key id>` for a customer key); what the
//! engine does by itself runs as `system:<task>` (`system:autoclose`). The actor travels with
//! the command as its outbox header `gpubill-actor` (so also on the commands topic), set by
//! [`as_actor`] around the work: a task-local, so that no store method needs another
//! parameter. Work outside any [`as_actor`] is the engine's: [`SYSTEM`].

use std::future::Future;

tokio::task_local! {
    static ACTOR: String;
}

/// The actor of work no caller scoped: the engine itself.
pub const SYSTEM: &str = "system";

/// The actor of the automatic close (`serve --close-grace`).
pub const AUTOCLOSE: &str = "system:autoclose";

/// Runs `f` with `actor` as the author of every command it records.
pub async fn as_actor<F: Future>(actor: impl Into<String>, f: F) -> F::Output {
    ACTOR.scope(actor.into(), f).await
}

/// The actor of the running work ([`SYSTEM`] outside any [`as_actor`]).
pub fn current() -> String {
    ACTOR
        .try_with(Clone::clone)
        .unwrap_or_else(|_| SYSTEM.to_string())
}
