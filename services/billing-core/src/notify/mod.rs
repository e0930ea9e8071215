//! Notifications (issue 28): the pure rules that turn billing state into notices, each a
//! function of explicit inputs and `now` (Unix seconds): budgets on actual cost and forecast
//! ([`budget`], evaluated by [`budget_eval`]), the burn rate they and the wallet read
//! ([`burn`]), a low prepaid balance ([`balance`]), expiry and renewal reminders
//! ([`expiry`]), and the arrears sequence ([`arrears`]). What they emit is a [`Notice`]
//! ([`notice`]): a stable event type, a dedupe key, a payload, and the quota decision due with
//! it. One example payload per type is in [`examples`]. The choices are collected in
//! [`crate::choices::notify`].
//!
//! Children name each other by full paths (`crate::notify::budget::Budget`) and never import
//! from this file, so the module graph has no cycle (`scripts/module-cycles.py`).

pub mod arrears;
pub mod balance;
pub mod budget;
pub mod budget_eval;
pub mod burn;
pub mod examples;
pub mod expiry;
pub mod notice;
pub mod settings;

pub use arrears::{ArrearsPolicy, ArrearsState, Observed, Step, next_due, step};
pub use balance::{BalanceAlert, BalanceState, hours_left};
pub use budget::{Budget, BudgetAction, BudgetError, BudgetScope, BudgetState};
pub use budget_eval::evaluate as evaluate_budget;
pub use examples::example;
pub use expiry::{Dated, ExpiryState, ReminderPolicy, reminders};
pub use notice::{DecisionDue, DecisionKind, Notice, NoticeKind, UnknownKind};
pub use settings::NotifySettings;
