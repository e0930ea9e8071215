//! Webhook endpoints and their delivery (issue 28), the store's side: the endpoints the
//! customers and the operator register, and [`SqlOutbox`], the outbox the delivery worker of
//! `billing_webhooks` reads and writes over the tables of migration 0027.
//!
//! | file | what it does |
//! |---|---|
//! | `endpoints.rs` | [`crate::WebhookHandle`]: create (the secret shown once), list, get, change, delete, rotate the secret, enable, the delivery log, resend, send a test event |
//! | `outbox.rs` | [`SqlOutbox`]: `due` (heads of enabled, live endpoints, claimed with a lease), `record` (compare-and-set on the attempt count), `requeue` |
//!
//! Several engines share the tables: `due` claims each head it hands out by moving its
//! `next_attempt_at_ms` to the end of a lease ([`LEASE_MS`]) with a compare-and-set, so one
//! engine attempts it while the others skip it; a worker that dies mid-attempt leaves the
//! head due again when the lease ends. `record`'s compare-and-set on `attempts_total` keeps a
//! stale worker from overwriting a newer outcome.

pub mod endpoints;
pub mod outbox;

pub use outbox::{LEASE_MS, SqlOutbox};
