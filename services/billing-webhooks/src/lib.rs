//! Webhook delivery for gpubill (issue 28): notifications of the ledger, written to an outbox by
//! the core, are POSTed to the customers' and the platform's endpoints.
//!
//! - [`sign`]: Standard Webhooks signatures (`webhook-id`, `webhook-timestamp`,
//!   `webhook-signature`), `whsec_` secrets and their rotation.
//! - [`schedule`]: Svix's retry schedule with jitter, failing a message and disabling an
//!   endpoint (pure).
//! - [`target`]: endpoint URLs and event filters checked, addresses refused against SSRF, also
//!   when connecting.
//! - [`outbox`]: the persistence the worker needs (a small trait), [`memory`] its in-memory
//!   implementation.
//! - [`deliver`]: the worker: in order per endpoint, parallel across endpoints.

pub mod clock;
pub mod deliver;
pub mod filter;
pub mod guard;
pub mod limits;
pub mod memory;
pub mod outbox;
pub mod schedule;
pub mod sign;
pub mod target;
