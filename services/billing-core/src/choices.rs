//! Where billing-semantics.md is silent or ambiguous, gpubill chooses, and says so here.
//! Each choice is also documented at the code that makes it.
//!
//! The choices, one module a topic:
//! - [`part1`]: part 1 (sections 1 to 7): events, accounts, the price book, rating, lines.
//! - [`part2`]: part 2 (sections 8 to 14): rental events, their price book terms and rating,
//!   and the engine.
//! - [`part3`]: part 3 (sections 15 to 21): the commercial terms, and part 3 in the engine.
//! - [`terms`]: account terms as commands (issue 10) and account terms of closed periods
//!   (issue 24.1).
//! - [`finance`]: numbering, closes and adjustments, wallets (issue 12), settling from the
//!   wallet (issue 24.2), what `gpubill verify` checks (issue 24.3), the FOCUS export
//!   (issue 27).
//! - [`api`]: hostile clients (issue 24, items 4 to 8), what a customer sees (items 11 to
//!   15), the ingest's 503 (issue 30), estimates (issue 26).
//! - [`engine`]: price book versions in memory (issue 24, item 9), Kafka topics (item 10).
//! - [`notify`]: budgets, a low balance, reminders and the arrears sequence (issue 28).

pub mod api;
pub mod engine;
pub mod finance;
pub mod notify;
pub mod part1;
pub mod part2;
pub mod part3;
pub mod terms;
