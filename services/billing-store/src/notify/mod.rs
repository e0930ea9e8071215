//! Notifications (issue 28), the store's side: an account's settings (budgets, balance
//! alerts, reminders, the arrears policy), the states the core's rules remember between
//! evaluations, and the outbox of notifications with their fan-out to webhook deliveries.
//!
//! | file | what it does |
//! |---|---|
//! | `settings.rs` | [`NotifySettings`], validated and set by the `notify.put` command |
//! | `evaluate.rs` | runs `billing_core::notify`'s rules: after each batch (budgets, balance), after a wallet or payment change, and on a tick (arrears steps, reminders) |
//! | `publish.rs` | writes a notice once under its dedupe key, with the account's next sequence number, its deliveries, its Kafka row and its quota decision |
//! | `reads.rs` | what the API shows: the settings, the states and what happens next, the notifications |
//!
//! Every notice is written in the transaction of what caused it (a batch, a command, a
//! tick's evaluation), keyed by the core's dedupe key: the same fact written again (a
//! redelivered batch, a replay, a second engine, a tick after a crash) finds its key and
//! writes nothing. Children name each other by full paths and never import from this file.

pub mod evaluate;
pub mod publish;
pub mod reads;
pub mod settings;
